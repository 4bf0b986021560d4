import JSON
import StateKit

/// `--emit swift`: a Swift Testing test that serves the application in-process through
/// ``ServerTestHarness`` (the server's own connection, on a virtual clock) and expects the
/// steps' lines. Not a `TestStore` test: a recording holds wire actions and published views,
/// not the typed actions and private state a `TestStore` assertion is written in, while the
/// harness answers exactly the lines the recording was made of.
extension ReplayEmitter {
  static func swift(steps: [Step], history: Int64, source: String, name: String) -> String {
    let base = identifier(source)
    let upper = base.prefix(1).uppercased() + base.dropFirst()
    let text = """
      // Emitted by `\(name) replay --emit swift` from the recording \(source).
      //
      // Serves the application's features in-process (`ServerTestHarness`: the server's own
      // connection, on a virtual clock, with `--history \(history)`), sends each recorded request
      // in order (each dispatch, and a clock/advance to when each effect's action was recorded)
      // and expects every line it is answered with to equal the recorded one: each response at
      // its step, each store's state/patch and store/event lines in their order (through
      // `ServerTestHarness.loose`: the values of `at` and `durationUs`, and ISO 8601 timestamps,
      // which read the wall clock, differ on every run and only have to be present).
      //
      // The test target defines, once, the features as the application's executable builds them:
      // `func applicationFeatures(clock: ServerClock) -> [FeatureDescriptor]`.
      import StateKit
      import StateServer
      import Testing

      @StateActor @Test func replays\(upper)() async throws {
        var options = ServerOptions()
        options.historyLimit = \(history)
        let harness = try ServerTestHarness(options: options, features: applicationFeatures(clock:))
        defer { harness.close() }
        let differences = try await harness.replay(\(base)Steps)
        #expect(differences.isEmpty, "\\(differences.joined(separator: "\\n"))")
      }

      let \(base)Steps: [ServerTestHarness.Step] = [

      """
    // swift format wants a trailing comma after the last element of a collection written on
    // several lines, except when it holds one element.
    func elements(_ items: [String]) -> String {
      items.joined(separator: ",\n") + (items.count > 1 ? ",\n" : "\n")
    }
    let written = steps.map { step in
      "  .init(\n    \(literal(step.request)),\n    expecting: [\n"
        + elements(step.expected.map { "      " + literal($0) }) + "    ])"
    }
    return text + (written.isEmpty ? "" : elements(written)) + "]\n"
  }

  /// A raw string literal of `value`'s compact JSON, with one `#` more than any run of them
  /// after a quote inside it.
  private static func literal(_ value: JSON) -> String {
    let text = compact(value)
    var longest = 0
    var run = -1
    for character in text {
      if character == "\"" {
        run = 0
      } else if character == "#", run >= 0 {
        run += 1
        longest = max(longest, run)
      } else {
        run = -1
      }
    }
    let hashes = String(repeating: "#", count: longest + 1)
    return hashes + "\"" + text + "\"" + hashes
  }

  /// A Swift identifier from the recording's file name, lower camel case: `bug-42.ndjson`
  /// becomes `bug42`; `recording` when nothing of the name is left.
  static func identifier(_ path: String) -> String {
    var name = String(path.split(separator: "/").last ?? "")
    if let dot = name.firstIndex(of: ".") { name = String(name[..<dot]) }
    let words = name.split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }
    var text = ""
    for (index, word) in words.enumerated() {
      text += index == 0 ? word.lowercased() : word.prefix(1).uppercased() + word.dropFirst()
    }
    guard let first = text.first, !first.isNumber else { return "recording" + text }
    return text
  }
}
