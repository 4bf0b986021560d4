import JSON
import StateKit
import Testing

@testable import StateServer

/// Every method is declared once, in `Connection.methods`; routing, the draining rule and
/// `rpc.discover` read that table (issue 12).
@StateActor
@Suite struct MethodTableTests {
  @Test func namesAreDeclaredOnceAndDiscoveryListsExactlyTheTable() throws {
    let names = Connection.methods.map(\.name)
    #expect(Set(names).count == names.count)
    let document = OpenRPC.document(features: [ScriptedStore.descriptor])
    let listed = try #require(document["methods"]?.arrayValue).compactMap { $0["name"] }
    #expect(listed == names.map(JSON.string))
  }

  @Test func onlyCancelAndShutdownAreServedWhileDraining() {
    let draining = Connection.methods.filter(\.servedWhileDraining).map(\.name)
    #expect(Set(draining) == ["$/cancelRequest", "shutdown"])
  }

  @Test func aMistypedParamIsRefusedAtItsPointerByTheDecoder() throws {
    let harness = try Harness()
    let out = try harness.send(
      #"{"jsonrpc":"2.0","id":1,"method":"state/get","params":{"store":7}}"#,
      #"{"jsonrpc":"2.0","id":2,"method":"dispatch","params":{"store":"fake","action":{},"wait":"later"}}"#,
      #"{"jsonrpc":"2.0","id":3,"method":"state/get","params":{"store":"fake","path":"nope"}}"#,
      #"{"jsonrpc":"2.0","id":4,"method":"store/close","params":[1]}"#)
    #expect(out.map { $0["error"]?["data"]?["pointer"] } == ["/store", "/wait", "/path", ""])
    #expect(
      out[1]["error"]?["data"]?["reason"]?.stringValue?.contains(#""reduced" or "settled""#) == true
    )
  }

  @Test func theWaitNamesInCapabilitiesAreTheEnumsCases() throws {
    let harness = try Harness()
    let out = try harness.send(#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#)
    #expect(out.last?["result"]?["capabilities"]?["waits"] == ["reduced", "settled"])
    #expect(Wait.allCases.map(\.rawValue) == ["reduced", "settled"])
  }

  @Test func aHandlerWrittenAgainstParamsMovesIntoTheTableUnchanged() throws {
    let harness = try Harness()
    let method = RPCMethod("x/echo", Params.self, summary: "Echoes store.") {
      _, params, _ throws(RPCError) in
      .result(.string(try params.string("store", "an id")))
    }
    do throws(RPCError) {
      _ = try method.call(harness.connection, ["store": 1], nil)
      Issue.record("a mistyped member was accepted")
    } catch {
      #expect(error.data?["pointer"] == "/store")
    }
    guard case .result(let result, _) = try method.call(harness.connection, ["store": "s"], nil)
    else {
      Issue.record("no result")
      return
    }
    #expect(result == "s")
  }
}
