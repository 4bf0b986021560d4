import JSON
import StateKit

/// An application's stores served in-process, the way the server serves them, for tests: send a
/// JSON-RPC request line, get back every line the server writes up to its response (the
/// `state/patch` and `store/event` lines first, in the order a client reads them).
///
/// It is the connection the server runs (the same methods, ordering and errors), with no
/// threads, no stdin and nothing persisted; the clock is virtual unless the options say
/// otherwise, so `clock/advance` moves every effect's timer. `replay --emit swift` writes tests
/// on it; it serves hand-written ones as well:
///
/// ```swift
/// @MainActor @Test func incrementIsPatchedThenAnswered() async throws {
///   let harness = try ServerTestHarness { clock in [CounterFeature(clock: clock).descriptor()] }
///   let lines = try await harness.send(
///     #"{"jsonrpc":"2.0","id":1,"method":"dispatch","params":{"store":"counter","action":{"type":"increment"}}}"#)
///   #expect(lines.last?["result"]?["version"] == 1)
/// }
/// ```
@MainActor
public final class ServerTestHarness {
  /// Why a line could not be sent, or was not answered.
  public struct Failure: Error, CustomStringConvertible {
    public var description: String
  }

  /// One request and the lines it is answered with, as JSON text (what `replay --emit swift`
  /// writes for each recorded step).
  public struct Step: Sendable {
    public var request: String
    public var expected: [String]

    public init(_ request: String, expecting expected: [String]) {
      self.request = request
      self.expected = expected
    }
  }

  /// The clock every feature's effects sleep on: the one the `features` closure was given.
  public let clock: ServerClock
  private let queue = OutputQueue(maxMessages: 1 << 20)
  private let registry: StoreRegistry
  private let connection: Connection

  /// Serves the features `features` builds on the harness's clock (`options.clock`, switched to
  /// virtual time when `virtualClock`) and opens their default stores. `options.recordPath` and
  /// persistence are ignored: nothing is written anywhere.
  public init(
    options: ServerOptions = ServerOptions(), virtualClock: Bool = true,
    features: (ServerClock) -> [FeatureDescriptor]
  ) throws {
    var options = options
    options.recordPath = nil
    if virtualClock { options.clock.mode = .virtual }
    clock = options.clock
    let descriptors = features(options.clock)
    if let refusal = Server.refusal(of: descriptors) { throw Failure(description: refusal) }
    registry = StoreRegistry(features: descriptors, persistence: nil)
    connection = Connection(
      registry: registry, output: queue, options: options, log: Log(level: .error))
    do {
      try registry.openDefaultStores()
    } catch {
      throw Failure(description: "cannot open the default stores: \(error.message)")
    }
    for store in registry.openStores { connection.attach(store) }
  }

  /// Serves `request` (one JSON-RPC line) and returns the lines written since the last call,
  /// through the response to it: a request answered later (`clock/advance`, a dispatch with
  /// `wait: "settled"`) is awaited. A notification (no id) returns what it caused at once.
  public func send(_ request: String) async throws -> [JSON] {
    let message: JSON
    do {
      message = try JSON(parsing: request)
    } catch {
      throw Failure(description: "the request is not JSON: \(error)")
    }
    connection.receive([.message(message)])
    var lines = try written()
    guard let id = message["id"], message["method"] != nil else { return lines }
    for reply in connection.pending[id] ?? [] { await reply.resolved() }
    // A reply resolved later is committed as it resolves; a few turns of the main actor cover
    // a commit scheduled behind it, and the bound keeps a missing answer from hanging the test.
    var turns = 0
    while !lines.contains(where: { Self.answers(id, $0) }) {
      guard turns < 1000 else {
        throw Failure(description: "no response to \(request); lines written: \(lines)")
      }
      turns += 1
      await Task.yield()
      lines += try written()
    }
    return lines
  }

  /// Sends each step's request in order, then settles (`clock/advance {"ms": 0}`: effects
  /// still running reach their sleep or end), and returns how what was answered differs from
  /// what the steps expect, one sentence each; empty when everything matches (through
  /// ``loose(_:)``). Each response is compared at its step; each store's patches and events
  /// in their order over the whole session. The order of two stores' lines is not compared: an
  /// effect that sends without sleeping on the clock (a backend's request counter) runs
  /// beside the requests, and its store's lines may come before or after another's.
  public func replay(_ steps: [Step]) async throws -> [String] {
    var differences: [String] = []
    var received: [String: [JSON]] = [:]
    var expected: [String: [(step: Int, line: JSON)]] = [:]
    for (index, step) in steps.enumerated() {
      let number = index + 1
      let id = (try? JSON(parsing: step.request))?["id"]
      var answer: JSON?
      for line in try await send(step.request) {
        if let id, Self.answers(id, line) {
          answer = line
        } else {
          received[Self.stream(line), default: []].append(line)
        }
      }
      var want: JSON?
      for text in step.expected {
        let line: JSON
        do {
          line = try JSON(parsing: text)
        } catch {
          throw Failure(description: "step \(number): an expected line is not JSON: \(error)")
        }
        if let id, Self.answers(id, line) {
          want = line
        } else {
          expected[Self.stream(line), default: []].append((number, line))
        }
      }
      if answer.map(Self.loose) != want.map(Self.loose) {
        differences.append(
          "step \(number): the response to \(step.request) is \(answer.map(\.description) ?? "missing"), "
            + "recorded \(want.map(\.description) ?? "none")")
      }
    }
    let settle =
      #"{"jsonrpc":"2.0","id":"replay: settled","method":"clock/advance","params":{"ms":0}}"#
    for line in try await send(settle) where !Self.answers("replay: settled", line) {
      received[Self.stream(line), default: []].append(line)
    }
    for key in Set(received.keys).union(expected.keys).sorted() {
      let got = received[key] ?? []
      let want = expected[key] ?? []
      for position in 0..<max(got.count, want.count) {
        let line: JSON? = position < got.count ? got[position] : nil
        let recorded: (step: Int, line: JSON)? = position < want.count ? want[position] : nil
        guard line.map(Self.loose) != recorded.map({ Self.loose($0.line) }) else { continue }
        let step = recorded.map { "step \($0.step)" } ?? "after the last step"
        differences.append(
          "\(key), line \(position + 1) of it (\(step)): received \(line.map(\.description) ?? "nothing"), "
            + "recorded \(recorded.map(\.line.description) ?? "nothing")")
        break
      }
    }
    return differences
  }

  /// Which ordered stream a line belongs to: its store's (`store counter`), or its method's.
  private static func stream(_ line: JSON) -> String {
    if let store = line["params"]?["store"]?.stringValue { return "store \(store)" }
    return line["method"]?.stringValue ?? "responses"
  }

  /// Closes every open store, cancelling the effects still running or asleep.
  public func close() {
    _ = registry.closeAll()
  }

  /// `line` with what differs on every run masked: the value of every `at` and `durationUs`
  /// key becomes `"<volatile>"`, and every ISO 8601 timestamp string (`lastUpdated` in a
  /// patch, which reads the wall clock) becomes `"<timestamp>"`. Compare two lines through it.
  public nonisolated static func loose(_ line: JSON) -> JSON {
    switch line {
    case .object(let object):
      var masked = JSONObject()
      for (key, value) in object.members {
        masked[key] = key == "at" || key == "durationUs" ? "<volatile>" : loose(value)
      }
      return .object(masked)
    case .array(let values):
      return .array(values.map(loose))
    case .string(let text) where isTimestamp(text):
      return "<timestamp>"
    default:
      return line
    }
  }

  /// `2026-12-03T12:00:00.000Z`: the only form a `Date` takes on the wire.
  nonisolated static func isTimestamp(_ text: String) -> Bool {
    let pattern = Array("dddd-dd-ddTdd:dd:dd.dddZ".utf8)
    let bytes = Array(text.utf8)
    guard bytes.count == pattern.count else { return false }
    for (byte, expected) in zip(bytes, pattern) {
      if expected == UInt8(ascii: "d") {
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return false }
      } else if byte != expected {
        return false
      }
    }
    return true
  }

  private static func answers(_ id: JSON, _ line: JSON) -> Bool {
    line["id"] == id && line["method"] == nil
  }

  private func written() throws -> [JSON] {
    var lines: [JSON] = []
    while let batch = queue.takeQueued() {
      for line in batch {
        var writer = JSONWriter()
        do {
          try line.write(to: &writer)
          lines.append(try JSON(parsing: writer.withUnsafeBytes { Array($0.dropLast()) }))
        } catch {
          throw Failure(description: "a line the server wrote does not read back: \(error)")
        }
      }
    }
    return lines
  }
}
