import Foundation
import JSON
import StateKit
import Testing

@testable import StateServer

/// `replay --emit`: the steps rebuilt from a recording, and the literals written for them.
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

  @Test func anEffectsActionBecomesAnAdvanceToItsClockWithItsPatchBeforeTheAnswer() throws {
    let path = try recording([
      Self.header,
      #"{"type":"open","store":"counter","feature":"counter","version":0,"state":{"count":0}}"#,
      #"{"type":"entry","store":"counter","kind":"action","version":0,"#
        + #""action":{"type":"incrementLater","afterMs":10},"origin":{"request":1},"patch":[],"#
        + #""events":[],"clockMs":2}"#,
      #"{"type":"entry","store":"counter","kind":"action","version":1,"#
        + #""action":{"type":"increment"},"origin":{"request":1,"action":1},"#
        + #""patch":[{"op":"replace","path":"/count","value":1}],"events":[],"clockMs":12}"#,
      #"{"type":"entry","store":"counter","kind":"events","version":1,"action":null,"#
        + #""origin":{"request":1,"action":1},"patch":[],"events":[{"type":"done"}],"clockMs":12}"#,
    ])
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (_, steps) = try ReplayEmitter.steps(path: path)
    // The first entry is the test's time 0, whatever the recording's clock read then.
    #expect(steps.map { $0.request["method"]?.stringValue } == ["dispatch", "clock/advance"])
    #expect(steps.map { $0.request["params"]?["ms"] } == [nil, 10])
    let advance = steps.last?.expected ?? []
    #expect(
      advance.map { $0["method"]?.stringValue } == ["state/patch", "store/event", nil])
    #expect(advance.first?["params"]?["cause"] == .integer(1))
    #expect(advance.last?["result"] == ["clock": "virtual", "now": 10])
  }

  @Test func anEffectsActionWithoutTheClockIsRefusedSayingWhy() throws {
    let path = try recording([
      Self.header,
      #"{"type":"entry","store":"counter","kind":"action","version":1,"#
        + #""action":{"type":"increment"},"origin":{"request":1,"action":1},"patch":[]}"#,
    ])
    defer { try? FileManager.default.removeItem(atPath: path) }
    #expect {
      _ = try ReplayEmitter.steps(path: path)
    } throws: { error in
      (error as? ReplayEmitter.Refusal)?.message.hasPrefix(
        "line 2: an effect's action on 'counter' carries no clockMs") == true
    }
  }

  @Test func theSwiftTestIsNamedAfterTheRecordingFile() {
    #expect(ReplayEmitter.identifier("/tmp/bug-42.ndjson") == "bug42")
    #expect(ReplayEmitter.identifier("42 users.ndjson") == "recording42Users")
    #expect(ReplayEmitter.identifier("...") == "recording")
    let text = ReplayEmitter.swift(steps: [], history: 5, source: "a/bug-42.ndjson", name: "x")
    #expect(text.contains("@StateActor @Test func replaysBug42() async throws {"))
    #expect(text.contains("options.historyLimit = 5"))
    #expect(text.hasSuffix("let bug42Steps: [ServerTestHarness.Step] = [\n]\n"))
  }

  @Test func aQuoteAndHashInsideTheJSONGetALongerRawString() {
    let step = ReplayEmitter.Step(request: ["name": ##"a"#b"##], expected: [["id": 1]])
    let text = ReplayEmitter.swift(steps: [step], history: 1, source: "r", name: "x")
    #expect(text.contains(###"##"{"name":"a\"#b"}"##"###))
    #expect(text.contains(##"#"{"id":1}"#"##))
  }
}
