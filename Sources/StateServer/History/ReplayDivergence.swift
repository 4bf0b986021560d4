import JSON

extension Replay {
  enum Outcome {
    case matched(entries: Int, stores: Int, application: RecordedApplication?)
    case diverged(Divergence)
  }

  /// Where the rebuilt store first differs from the recording.
  struct Divergence {
    var store: String
    var version: Int64
    var line: Int
    var action: JSON
    var expected: [JSON]
    var actual: [JSON]?
    var reason: String

    var json: JSONObject {
      [
        "replay": "diverged", "store": .string(store), "version": .integer(version),
        "line": .integer(Int64(line)), "action": action, "expected": .array(expected),
        "actual": actual.map(JSON.array) ?? .null, "reason": .string(reason),
      ]
    }

    var text: String {
      var text = "store '\(store)' diverges at version \(version) (line \(line)): \(reason)\n"
      text += "  action:   \(action)\n"
      text += "  expected: \(JSON.array(expected))\n"
      text += "  actual:   \(actual.map { JSON.array($0).description } ?? "none")"
      return text
    }
  }
}
