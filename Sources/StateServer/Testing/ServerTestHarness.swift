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
/// @StateActor @Test func incrementIsPatchedThenAnswered() async throws {
///   let harness = try ServerTestHarness { clock in [CounterFeature(clock: clock).descriptor()] }
///   let lines = try await harness.send(
///     #"{"jsonrpc":"2.0","id":1,"method":"dispatch","params":{"store":"counter","action":{"type":"increment"}}}"#)
///   #expect(lines.last?["result"]?["version"] == 1)
/// }
/// ```
@StateActor
public final class ServerTestHarness {
  /// Why a line could not be sent, or was not answered.
  public struct Failure: Error, CustomStringConvertible {
    public var description: String
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
    for reply in connection.router.pendingReplies(for: id) { await reply.resolved() }
    // A reply resolved later is committed as it resolves; a few turns of the state actor cover
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

  /// Closes every open store, cancelling the effects still running or asleep.
  public func close() {
    _ = registry.closeAll()
  }

  static func answers(_ id: JSON, _ line: JSON) -> Bool {
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
