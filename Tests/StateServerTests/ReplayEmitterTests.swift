import Foundation
import JSON
import Testing

@testable import StateServer

/// `replay --emit pytest`: the steps rebuilt from a recording, and the literals written for them.
@Suite struct ReplayEmitterTests {
  private static let header =
    #"{"type":"header","format":"stateserver-recording","history":7}"#

  private func recording(_ lines: [String]) throws -> String {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("emit-\(UUID().uuidString).ndjson").path
    try (lines.joined(separator: "\n") + "\n").write(
      toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  @Test func anActionEntryBecomesItsRequestThenItsPatchEventsAndResponse() throws {
    let path = try recording([
      Self.header,
      #"{"type":"open","store":"counter","feature":"counter","version":4,"state":{"count":4}}"#,
      #"{"type":"entry","store":"counter","kind":"action","version":5,"action":{"type":"increment"},"#
        + #""origin":{"request":9},"patch":[{"op":"replace","path":"/count","value":5}],"#
        + #""events":[{"type":"bumped"}],"at":"2026-12-03T12:00:00.000Z"}"#,
    ])
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (history, steps) = try ReplayEmitter.steps(path: path)
    #expect(history == 7)
    #expect(steps.count == 1)
    #expect(steps.first?.request["id"] == .integer(9))
    #expect(steps.first?.request["method"]?.stringValue == "dispatch")
    let expected = steps.first?.expected ?? []
    #expect(expected.map { $0["method"]?.stringValue } == ["state/patch", "store/event", nil])
    #expect(expected.first?["params"]?["from"] == .integer(4))
    #expect(expected.first?["params"]?["cause"] == .integer(9))
    #expect(expected.last?["result"]?["version"] == .integer(5))
  }

  @Test func aRewindIsRefusedWithTheLineItIsOn() throws {
    let path = try recording([
      Self.header,
      #"{"type":"entry","store":"counter","kind":"rewind","to":0,"version":2,"patch":[]}"#,
    ])
    defer { try? FileManager.default.removeItem(atPath: path) }
    #expect {
      _ = try ReplayEmitter.steps(path: path)
    } throws: { error in
      (error as? ReplayEmitter.Refusal)?.message.hasPrefix("line 2: a rewind entry") == true
    }
  }

  @Test func quotesAndBackslashesAreEscapedInThePythonLiterals() {
    let step = ReplayEmitter.Step(
      request: ["id": 1, "name": "it's \\ here"], expected: [["id": 1]])
    let text = ReplayEmitter.pytest(steps: [step], history: 1000, source: "r", name: "stateserver")
    #expect(text.contains(#"'{"id":1,"name":"it\'s \\\\ here"}'"#))
    #expect(text.contains("def test_recording():"))
  }
}
