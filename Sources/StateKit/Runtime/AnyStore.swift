import JSON

/// The face of a store that the server sees, whatever its feature: wire actions in, JSON
/// publications out. `Store<F>` is the one implementation.
///
/// All stores live on the state actor, so the server reduces a whole batch of input lines
/// without a task hop per message; effects run concurrently and come back through `send`.
@StateActor
public protocol AnyStore: AnyObject {
  var id: String { get }
  var featureName: String { get }
  /// 0 for a new store; raised by exactly one for each reduced action that changed `published`.
  var version: UInt64 { get }
  /// The current view, encoded. Kept up to date by applying each publication's patch; may
  /// encode a large part of it on demand (O(view)): a caller after one value asks
  /// `publishedValue(at:)`.
  var published: JSON { get }
  /// The published value at `path` (nil: none), at the cost of that value.
  func publishedValue(at path: JSONPointer) -> JSON?
  /// Whether the published view has a value at `path`, without encoding it when it can.
  func hasPublishedValue(at path: JSONPointer) -> Bool
  /// Whether the published value at `path` is an object (false for nil), without encoding a
  /// large array to find it is one.
  func publishedValueIsObject(at path: JSONPointer?) -> Bool
  /// Elements of the view that `published` encodes on demand: a lower bound of its node count
  /// that costs nothing (0 for a store that keeps its view whole).
  var publishedElementsLeftOut: Int { get }
  /// Those of them at or under `path`: a lower bound of the value there, known without
  /// encoding it.
  func publishedElementsLeftOut(under path: JSONPointer) -> Int
  /// Writes `published` as JSON text, at the cost of the text rather than of its tree where
  /// it can.
  func writePublished(to writer: inout JSONWriter) throws
  /// The full private state (not the view), encoded, for persistence.
  var snapshot: JSON { get }

  /// Called synchronously, once per reduced action that changed the view or emitted events,
  /// before `send` returns for a client's action (so a patch is written before the response).
  var observer: (@StateActor (Publication) -> Void)? { get set }
  /// The values the publication its observer is given leaves to the state: operations of its
  /// patch that stand without their value (a large array replaced whole, `HeldValue`), while
  /// the observer runs; empty otherwise (and when `holdingObserver` takes the publication).
  var heldValues: [HeldValue] { get }
  /// Called instead of `observer` for a publication that leaves values to the state, with those
  /// values; when nil, `observer` is called and `heldValues` holds them. Neither the values nor
  /// a flag saying there are any is a part of `Publication`, and the server's `observer` has no
  /// case for them: either slowed every publication measurably (docs/architecture.md, step 51).
  var holdingObserver: (@StateActor (Publication, [HeldValue]) -> Void)? { get set }

  /// Decodes a wire action (`{"type": ..., fields}`), refuses a non-public or unknown type,
  /// validates and reduces it. `cause` (a request id) is carried by every publication this
  /// action or its effects produce.
  func send(wire action: JSON, cause: JSON?) throws(ActionError) -> Transaction

  /// Returns once every effect started by the transaction's action, and by the actions those
  /// effects fed back, has finished (or the store was closed); background effects
  /// (`Effect.background()`, a timer set far ahead) are not waited for.
  func settled(_ transaction: Transaction) async

  /// Returns once no effect of this store is running but background ones.
  func idle() async

  /// Cancels every effect; no effect outlives its store. Idempotent.
  func close()

  /// Cancels the effects the transaction's action started, and those of the actions they fed
  /// back (a client cancelled the request). Defaults in Store+Progress.swift say "none".
  func cancel(_ transaction: Transaction)
  /// Whether an effect the transaction's action started (or one of those it fed back) runs.
  func isRunning(_ transaction: Transaction) -> Bool
  /// Calls `observer` with the progress those effects report, then its `end`.
  func observeProgress(
    of transaction: Transaction, _ observer: @escaping @StateActor (ProgressUpdate) -> Void)

  // History (StoreHistory.swift; defaults in AnyStore+History.swift say "none").

  /// Keeps the last `limit` entries and reports each entry and effect event to `sink`.
  func startHistory(limit: Int, sink: (@StateActor (HistoryRecord) -> Void)?)
  /// The oldest version history can still produce; nil when it keeps none.
  var firstHeldVersion: UInt64? { get }
  /// Entries with a version above `since`, oldest first, about `limit` of them.
  func historyEntries(since: UInt64?, limit: Int) -> [HistoryEntry]
  /// The published view as it was at `version`.
  func published(at version: UInt64) throws(HistoryError) -> JSON
  /// The view at `version` held apart, when the view leaves a large array's elements to the
  /// state (nil otherwise: `published(at:)`), so it is written without a tree of them.
  func pastView(at version: UInt64) throws(HistoryError) -> (any HeldView)?
  /// Makes the state at `version` current as a new version; returns that version.
  @discardableResult
  func rewind(to version: UInt64, cause: JSON?) throws(HistoryError) -> UInt64
  /// Reduces a recorded action at its recorded time, without effects; returns the patch.
  func replay(wire action: JSON, at: Int64) throws(ActionError) -> [JSON]
}

/// What one reduced action changed, ready for the wire.
public struct Publication: Sendable {
  public var store: String
  /// The version before (`from`) and after (`to`); equal when only events were emitted.
  public var from: UInt64
  public var to: UInt64
  /// RFC 6902 operations turning the view at `from` into the view at `to`; empty if unchanged.
  public var patch: [JSON]
  /// Events as wire objects (`{"type": ..., fields}`), in emission order.
  public var events: [JSON]
  public var cause: JSON?
  /// RFC 6902 operations turning the private state before this action into the one after:
  /// what a journal commits. `nil` unless the store was asked for them
  /// (`JournaledStore.journalState()`, persistent stores only), and `nil` too when the store
  /// walks its private state on demand and its view changed (the patch is then owed:
  /// `JournaledStore.takeStatePatch()`). A store whose private state changed without its view
  /// changing publishes with `from == to` and this set.
  public var statePatch: [JSON]?
  /// Holds nothing (it takes no space): it makes the memberwise initializer, which the public
  /// one below calls, differ from it, so that both can exist. A publication made by an
  /// initializer of its own, field by field, was copied whole and the original destroyed (a
  /// retain and a release per reference in it, every publication; Swift 6.3's optimizer, which
  /// builds one from the memberwise initializer directly).
  private var memberwise: Void = ()
}

extension Publication {
  /// A publication of `store`'s change from version `from` to `to`.
  public init(
    store: String, from: UInt64, to: UInt64, patch: [JSON], events: [JSON], cause: JSON?,
    statePatch: [JSON]? = nil
  ) {
    self.init(
      store: store, from: from, to: to, patch: patch, events: events, cause: cause,
      statePatch: statePatch, memberwise: ())
  }
}

/// A handle on one client action and everything it sets off, for awaiting "settled".
public struct Transaction: Hashable, Sendable {
  public let rawValue: UInt64
  public init(rawValue: UInt64) { self.rawValue = rawValue }

  /// The transaction of background effects (`Effect.background()`) and of what they send:
  /// no client's (those count from 1), so no `settled` waits for them.
  public static let background = Transaction(rawValue: 0)
}

/// Why a wire action was not reduced. The server maps `refused` to -32003 and `invalid` to
/// -32602; `pointer` is relative to the action object (`/quantity`).
public enum ActionError: Error, Equatable, Sendable {
  /// An unknown action type, or an internal one only the core may send.
  case refused(type: String, reason: String)
  /// A field that does not decode, or that the feature's validation refused.
  case invalid(pointer: String, reason: String)

  /// The JSON-RPC error code the server answers with: -32003 refused, -32602 invalid.
  public var code: Int {
    switch self {
    case .refused: -32003
    case .invalid: -32602
    }
  }

  /// The pointer of an `.invalid` refusal, relative to the action object.
  public var pointer: String? {
    if case .invalid(let pointer, _) = self { return pointer }
    return nil
  }
}

extension AnyStore {
  /// For a store that keeps its whole view as JSON.
  public func publishedValue(at path: JSONPointer) -> JSON? { path.value(in: published) }

  public func hasPublishedValue(at path: JSONPointer) -> Bool { publishedValue(at: path) != nil }

  public func publishedValueIsObject(at path: JSONPointer?) -> Bool {
    guard let path, case .object? = publishedValue(at: path) else { return false }
    return true
  }

  public var publishedElementsLeftOut: Int { 0 }

  public var heldValues: [HeldValue] { [] }

  public var holdingObserver: (@StateActor (Publication, [HeldValue]) -> Void)? {
    get { nil }
    set {}
  }

  public func publishedElementsLeftOut(under path: JSONPointer) -> Int { 0 }

  public func writePublished(to writer: inout JSONWriter) throws { try writer.write(published) }
}
