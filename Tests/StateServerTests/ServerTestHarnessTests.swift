import JSON
import StateKit
import Testing

@testable import StateServer

/// ``ServerTestHarness``: the server's connection in-process, answering lines in wire order.
@StateActor
@Suite struct ServerTestHarnessTests {
  private func harness() throws -> ServerTestHarness {
    try ServerTestHarness { _ in [ScriptedStore.descriptor] }
  }

  @Test func aDispatchIsAnsweredWithItsPatchThenItsResponse() async throws {
    let harness = try harness()
    let lines = try await harness.send(
      #"{"jsonrpc":"2.0","id":1,"method":"dispatch","params":{"store":"fake","action":{"type":"increment"}}}"#
    )
    #expect(lines.map { $0["method"]?.stringValue } == ["state/patch", nil])
    #expect(lines.last?["result"] == ["store": "fake", "version": 1])
  }

  @Test func anAdvanceIsAwaitedUntilItsAnswer() async throws {
    let harness = try harness()
    #expect(harness.clock.mode == .virtual)
    let lines = try await harness.send(
      #"{"jsonrpc":"2.0","id":"a","method":"clock/advance","params":{"ms":250}}"#)
    #expect(lines.last?["result"] == ["clock": "virtual", "now": 250])
  }

  @Test func aRequestThatIsNotJSONThrows() async throws {
    let harness = try harness()
    await #expect(throws: ServerTestHarness.Failure.self) {
      _ = try await harness.send("{nope")
    }
  }

  @Test func replayReportsEachDifferenceByStep() async throws {
    let harness = try harness()
    let request =
      #"{"jsonrpc":"2.0","id":1,"method":"dispatch","params":{"store":"fake","action":{"type":"increment"}}}"#
    let differences = try await harness.replay([
      .init(
        request, expecting: [#"{"jsonrpc":"2.0","id":1,"result":{"store":"fake","version":2}}"#])
    ])
    #expect(differences.count == 2)
    #expect(differences.first?.hasPrefix("step 1: the response") == true)
    #expect(differences.last?.hasPrefix("store fake, line 1 of it (after the last step)") == true)
  }

  @Test func looseMasksTimesAndTimestampsOnly() {
    let line: JSON = [
      "at": "x", "durationUs": 3, "when": "2026-12-03T12:00:00.000Z", "name": "2026-12-03",
    ]
    #expect(
      ServerTestHarness.loose(line) == [
        "at": "<volatile>", "durationUs": "<volatile>", "when": "<timestamp>",
        "name": "2026-12-03",
      ])
  }
}
