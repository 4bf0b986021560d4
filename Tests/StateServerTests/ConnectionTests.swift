import JSON
import StateKit
import Testing

@testable import StateServer

/// Drives a `Connection` line by line and reads what it committed, without threads.
@StateActor
final class Harness {
  let queue = OutputQueue(maxMessages: 1000)
  let registry = StoreRegistry(features: [ScriptedStore.descriptor], persistence: nil)
  let connection: Connection

  init(options: ServerOptions = ServerOptions()) throws {
    connection = Connection(
      registry: registry, output: queue, options: options, log: Log(level: .error))
    try registry.openDefaultStores()
    for store in registry.openStores { connection.attach(store) }
  }

  var fake: ScriptedStore? { registry.store("fake") as? ScriptedStore }

  /// Sends lines and returns the lines written since the last call, parsed back.
  func send(_ lines: String...) throws -> [JSON] {
    connection.receive(try lines.map { .message(try JSON(parsing: $0)) })
    return try written()
  }

  func written() throws -> [JSON] {
    var lines: [JSON] = []
    while let batch = queue.takeQueued() {
      for line in batch {
        var writer = JSONWriter()
        try line.write(to: &writer)
        let bytes = writer.withUnsafeBytes { Array($0.dropLast()) }
        lines.append(try JSON(parsing: bytes))
      }
    }
    return lines
  }
}

@StateActor
@Suite struct ConnectionTests {
  @Test func patchIsWrittenBeforeTheResponseWithConsecutiveVersions() throws {
    let harness = try Harness()
    let out = try harness.send(
      #"{"jsonrpc":"2.0","id":1,"method":"dispatch","params":{"store":"fake","action":{"type":"increment"}}}"#,
      #"{"jsonrpc":"2.0","id":2,"method":"dispatch","params":{"store":"fake","action":{"type":"increment"}}}"#
    )
    #expect(
      out.map { $0["method"]?.stringValue ?? "response" } == [
        "state/patch", "response", "state/patch", "response",
      ])
    #expect(out[0]["params"]?["from"] == 0 && out[0]["params"]?["to"] == 1)
    #expect(out[0]["params"]?["cause"] == 1)
    #expect(out[2]["params"]?["from"] == 1 && out[2]["params"]?["to"] == 2)
    #expect(out[3]["result"] == ["store": "fake", "version": 2])
  }

  @Test func notificationsAreNeverAnswered() throws {
    let harness = try Harness()
    let out = try harness.send(
      #"{"jsonrpc":"2.0","method":"dispatch","params":{"store":"fake","action":{"type":"increment"}}}"#,
      #"{"jsonrpc":"2.0","method":"dispatch","params":{"store":"nope","action":{"type":"increment"}}}"#,
      #"{"jsonrpc":"2.0","method":"no/such/method"}"#)
    #expect(out.count == 1)
    #expect(out[0]["method"] == "state/patch")
    #expect(out[0]["params"]?["cause"] == nil)
  }

  @Test func unknownMethodWithArrayParamsIsMethodNotFound() throws {
    let harness = try Harness()
    let out = try harness.send(
      #"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}"#,
      #"{"jsonrpc":"2.0","id":2,"method":"store/list","params":[1]}"#)
    #expect(out[0]["error"]?["code"] == -32601)
    #expect(out[1]["error"]?["code"] == -32602)
  }

  @Test func invalidActionFieldsNameTheirPointerFromTheParamsRoot() throws {
    let harness = try Harness()
    let out = try harness.send(
      #"{"jsonrpc":"2.0","id":"a","method":"dispatch","params":{"store":"fake","action":{"type":"set","value":"x"}}}"#,
      #"{"jsonrpc":"2.0","id":"b","method":"dispatch","params":{"store":"fake","action":{"type":"loaded"}}}"#,
      #"{"jsonrpc":"2.0","id":"c","method":"dispatch","params":{"store":7,"action":{"type":"set"}}}"#
    )
    #expect(out[0]["error"]?["code"] == -32602)
    #expect(out[0]["error"]?["data"]?["pointer"] == "/action/value")
    #expect(out[1]["error"]?["code"] == -32003)
    #expect(out[2]["error"]?["data"]?["pointer"] == "/store")
    #expect(harness.fake?.version == 0)
  }

  @Test func settledWaitsForTheEffectAndItsPatchComesFirst() async throws {
    let harness = try Harness()
    let first = try harness.send(
      #"{"jsonrpc":"2.0","id":9,"method":"dispatch","params":{"store":"fake","action":{"type":"later"},"wait":"settled"}}"#
    )
    #expect(first.isEmpty)
    harness.fake?.finishEffects()
    await harness.connection.router.pendingReplies(for: 9).first?.resolved()
    let out = try harness.written()
    #expect(out.map { $0["method"]?.stringValue ?? "response" } == ["state/patch", "response"])
    #expect(out[1]["result"] == ["store": "fake", "version": 1])
  }

  @Test func cancelRequestAnswersThePendingRequestWithMinus32800() throws {
    let harness = try Harness()
    let out = try harness.send(
      #"{"jsonrpc":"2.0","id":"w","method":"dispatch","params":{"store":"fake","action":{"type":"later"},"wait":"settled"}}"#,
      #"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"w"}}"#)
    #expect(out.count == 1)
    #expect(out[0]["id"] == "w")
    #expect(out[0]["error"]?["code"] == -32800)
  }

  @Test func batchWithADeferredRequestIsOneArrayWrittenWhenComplete() async throws {
    let harness = try Harness()
    let out = try harness.send(
      #"[{"jsonrpc":"2.0","id":1,"method":"store/list"},{"jsonrpc":"2.0","id":2,"method":"dispatch","params":{"store":"fake","action":{"type":"later"},"wait":"settled"}},{"jsonrpc":"2.0","method":"store/list"}]"#
    )
    #expect(out.isEmpty)
    harness.fake?.finishEffects()
    await harness.connection.router.pendingReplies(for: 2).first?.resolved()
    let later = try harness.written()
    #expect(later.count == 2)
    #expect(later[1].arrayValue?.map { $0["id"] } == [1, 2])
  }

  @Test func pathSubscriptionGetsOnlyItsSubtree() throws {
    let harness = try Harness()
    _ = try harness.send(
      #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"subscribe":"none"}}"#)
    let subscribed = try harness.send(
      #"{"jsonrpc":"2.0","id":2,"method":"state/subscribe","params":{"store":"fake","path":"/count"}}"#,
      #"{"jsonrpc":"2.0","id":3,"method":"dispatch","params":{"store":"fake","action":{"type":"increment"}}}"#
    )
    #expect(subscribed[0]["result"]?["state"] == 0)
    #expect(subscribed[1]["params"]?["path"] == "/count")
    #expect(subscribed[1]["params"]?["patch"] == [["op": "replace", "path": "/count", "value": 1]])
  }

  @Test func aSubscribedSubtreeThatGoesAwayAndComesBackIsRemovedThenAdded() throws {
    let harness = try Harness()
    _ = try harness.send(
      #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"subscribe":"none"}}"#,
      #"{"jsonrpc":"2.0","id":2,"method":"state/subscribe","params":{"store":"fake","path":"/count"}}"#
    )
    let out = try harness.send(
      #"{"jsonrpc":"2.0","id":3,"method":"dispatch","params":{"store":"fake","action":{"type":"drop"}}}"#,
      #"{"jsonrpc":"2.0","id":4,"method":"dispatch","params":{"store":"fake","action":{"type":"set","value":7}}}"#
    )
    let patches = out.compactMap { $0["params"]?["patch"] }
    #expect(
      patches == [
        [["op": "remove", "path": "/count"]], [["op": "add", "path": "/count", "value": 7]],
      ])
  }

  @Test func subscribeNoneSendsNoPatches() throws {
    let harness = try Harness()
    let out = try harness.send(
      #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"subscribe":"none"}}"#,
      #"{"jsonrpc":"2.0","id":2,"method":"dispatch","params":{"store":"fake","action":{"type":"increment"}}}"#
    )
    #expect(out.count == 2)
    #expect(out.allSatisfy { $0["id"] != nil })
  }

  @Test func subscribeNoneStillDeliversTheEventsOfADispatch() throws {
    let harness = try Harness()
    let out = try harness.send(
      #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"subscribe":"none"}}"#,
      #"{"jsonrpc":"2.0","id":2,"method":"dispatch","params":{"store":"fake","action":{"type":"toast"}}}"#
    )
    #expect(
      out.map { $0["method"]?.stringValue ?? "response" } == [
        "response", "store/event", "response",
      ])
    #expect(out[1]["params"] == ["store": "fake", "event": ["type": "toast"]])
  }

  @Test func closingAStoreCancelsItsEffectsAndAnnouncesIt() throws {
    let harness = try Harness()
    let opened = try harness.send(
      #"{"jsonrpc":"2.0","id":1,"method":"store/open","params":{"feature":"fake","store":"f2","state":{"count":5}}}"#,
      #"{"jsonrpc":"2.0","id":2,"method":"dispatch","params":{"store":"f2","action":{"type":"later"}}}"#
    )
    #expect(opened[0]["result"]?["state"] == ["count": 5])
    let store = harness.registry.store("f2") as? ScriptedStore
    let closed = try harness.send(
      #"{"jsonrpc":"2.0","id":3,"method":"store/close","params":{"store":"f2"}}"#,
      #"{"jsonrpc":"2.0","id":4,"method":"store/open","params":{"feature":"fake","store":"fake"}}"#,
      #"{"jsonrpc":"2.0","id":5,"method":"store/open","params":{"feature":"nope"}}"#)
    #expect(store?.isClosed == true)
    #expect(closed[0]["method"] == "store/closed")
    #expect(closed[1]["result"] == [:])
    #expect(closed[2]["error"]?["code"] == -32004)
    #expect(closed[3]["error"]?["code"] == -32002)
  }
}

/// An attached client's request ids are its own: a store carries them tagged with the client's
/// number, and a patch shows each client only its own.
@StateActor
@Suite struct AttachedCauseTests {
  @Test func eachClientSeesOnlyItsOwnCause() throws {
    let owner = try Harness().connection
    let first = try Harness().connection
    first.role = .attached(1)
    let second = try Harness().connection
    second.role = .attached(2)
    let tagged = try #require(first.storeCause(7))
    #expect(tagged == ["client": 1, "id": 7])
    #expect(first.clientCause(tagged) == 7)
    #expect(second.clientCause(tagged) == nil)
    #expect(owner.clientCause(tagged) == nil)
    #expect(owner.storeCause(7) == 7)
    #expect(owner.clientCause(7) == 7)
    #expect(first.clientCause(7) == nil)
    #expect(first.storeCause(nil) == nil)
  }
}
