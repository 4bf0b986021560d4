import JSON
import StateKit

/// A hand-written store standing in for `Store<F>`: a counter whose effects finish only when
/// the test says so, so ordering and "settled" are tested without real time.
@StateActor
final class ScriptedStore: AnyStore {
  let id: String
  let featureName = "fake"
  private(set) var version: UInt64 = 0
  private(set) var published: JSON
  var snapshot: JSON { published }
  var observer: (@StateActor (Publication) -> Void)?
  private var nextTransaction: UInt64 = 0
  /// Effects waiting for `finishEffects()`, by transaction.
  private var effects: [(Transaction, JSON?)] = []
  private var waiters: [(Transaction?, CheckedContinuation<Void, Never>)] = []
  private(set) var isClosed = false

  static let descriptor = FeatureDescriptor(
    name: "fake", publicActions: ["increment", "set", "toast", "later", "drop"],
    eventNames: ["toast"],
    isPersistent: false, schemaVersion: 1,
    viewSchema: ["type": "object", "properties": ["count": ["type": "integer"]]],
    actionSchemas: ["increment": ["type": "object"]], eventSchemas: ["toast": ["type": "object"]],
    makeStore: { id, initial, _ in
      ScriptedStore(id: id, count: initial?["count"]?.integerValue ?? 0)
    })

  init(id: String, count: Int64 = 0) {
    self.id = id
    published = ["count": .integer(count)]
  }

  var count: Int64 { published["count"]?.integerValue ?? 0 }

  func send(wire action: JSON, cause: JSON?) throws(ActionError) -> Transaction {
    guard let type = action["type"]?.stringValue else {
      throw .invalid(pointer: "/type", reason: "expected a string")
    }
    nextTransaction += 1
    let transaction = Transaction(rawValue: nextTransaction)
    switch type {
    case "increment": change(to: count + 1, cause: cause)
    case "set":
      guard let value = action["value"]?.integerValue else {
        throw .invalid(pointer: "/value", reason: "expected an integer")
      }
      change(to: value, cause: cause)
    case "toast":
      observer?(
        Publication(
          store: id, from: version, to: version, patch: [], events: [["type": "toast"]],
          cause: cause))
    case "later": effects.append((transaction, cause))
    case "drop": drop(cause: cause)
    case "loaded": throw .refused(type: type, reason: "'loaded' is internal")
    default: throw .refused(type: type, reason: "unknown action")
    }
    return transaction
  }

  /// Runs every pending effect: each increments the count, then its waiters resume.
  func finishEffects() {
    let running = effects
    effects = []
    for (_, cause) in running { change(to: count + 1, cause: cause) }
    resumeWaiters()
  }

  private func change(to value: Int64, cause: JSON?) {
    let from = version
    version += 1
    let op: JSON = published["count"] == nil ? "add" : "replace"
    published["count"] = .integer(value)
    observer?(
      Publication(
        store: id, from: from, to: version,
        patch: [["op": op, "path": "/count", "value": .integer(value)]], events: [],
        cause: cause))
  }

  /// Removes the `count` member altogether (a subtree that goes away and may come back).
  private func drop(cause: JSON?) {
    guard published["count"] != nil else { return }
    let from = version
    version += 1
    published["count"] = nil
    observer?(
      Publication(
        store: id, from: from, to: version, patch: [["op": "remove", "path": "/count"]],
        events: [], cause: cause))
  }

  private func resumeWaiters() {
    let still = waiters
    waiters = []
    for (transaction, continuation) in still {
      let busy = effects.contains { transaction == nil || $0.0 == transaction }
      if busy { waiters.append((transaction, continuation)) } else { continuation.resume() }
    }
  }

  func settled(_ transaction: Transaction) async {
    guard effects.contains(where: { $0.0 == transaction }) else { return }
    await withCheckedContinuation { waiters.append((transaction, $0)) }
  }

  func idle() async {
    guard !effects.isEmpty else { return }
    await withCheckedContinuation { waiters.append((nil, $0)) }
  }

  func close() {
    isClosed = true
    effects = []
    resumeWaiters()
  }
}
