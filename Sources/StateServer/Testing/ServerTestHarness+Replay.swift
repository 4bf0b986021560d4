import JSON

/// Checking a session: the steps a recording expects, and lines compared with what differs on
/// every run masked.
extension ServerTestHarness {
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
}
