import FoundationEssentials
import JSON

/// Why a file cannot be replayed, or turned into a test, at all: the message names the line.
struct RecordingRefusal: Error {
  var message: String
  init(_ message: String) { self.message = message }
}

/// The lines of a `--record` file, parsed, for ``Replay`` and ``ReplayEmitter`` alike: UTF-8
/// NDJSON whose first line is the `header`. Empty lines are skipped; each line keeps its number
/// in the file, which every refusal names.
enum RecordingReader {
  struct Line {
    var number: Int
    var json: JSON
    var type: String? { json["type"]?.stringValue }
  }

  static func lines(path: String) throws(RecordingRefusal) -> [Line] {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw RecordingRefusal("cannot read the file")
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw RecordingRefusal("the file is not UTF-8 text")
    }
    var lines: [Line] = []
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
      let number = index + 1
      let json: JSON
      do {
        json = try JSON(parsing: String(line))
      } catch {
        throw RecordingRefusal("line \(number) is not JSON: \(error)")
      }
      let parsed = Line(number: number, json: json)
      if number == 1 && parsed.type != "header" {
        throw RecordingRefusal(
          "line 1 is not a recording header (expected {\"type\": \"header\", ...})")
      }
      lines.append(parsed)
    }
    guard !lines.isEmpty else {
      throw RecordingRefusal("the file is empty; expected a recording header")
    }
    return lines
  }

  /// The string `key` of `line`, or a refusal naming it.
  static func field(_ line: Line, _ key: String) throws(RecordingRefusal) -> String {
    guard let value = line.json[key]?.stringValue else {
      throw RecordingRefusal("line \(line.number): missing \"\(key)\" (a string)")
    }
    return value
  }
}
