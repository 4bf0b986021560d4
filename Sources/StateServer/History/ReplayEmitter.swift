import FoundationEssentials
import JSON

/// `stateserver replay --emit pytest|swift FILE`: turns a `--record` session into a test, so a
/// bug report's recording becomes a regression test.
///
/// A recording holds each store's history, not the wire: the emitter rebuilds the requests
/// (``steps(path:)``): from every action entry a client's request caused, the `dispatch` that
/// made it (with the recorded id, so `cause` matches), and for every action or events an
/// effect sent, a `clock/advance` to the time the recording's clock read then (`clockMs`). Each
/// request comes with the lines the server answered it with: the `state/patch` (when the patch
/// is not empty), one `store/event` per recorded event, then the response. The emitted test
/// serves the application on a virtual clock (a spawned server for pytest, ``ServerTestHarness``
/// in-process for Swift), sends each request in order and expects every line, in order.
///
/// Refused (status 2, a message on stderr naming the line): a file that is not a recording,
/// rewinds and skips (their history requests are not recorded), an attached client's actions,
/// and an effect's action or events in a recording whose entries carry no `clockMs` (made
/// before they did: when it happened on the server's clock cannot be known).
enum ReplayEmitter {
  /// What the emitter can write.
  enum Target: String, CaseIterable {
    case pytest
    case swift
  }

  /// One request and the lines it is answered with.
  struct Step {
    var request: JSON
    var expected: [JSON]
  }

  typealias Refusal = RecordingRefusal

  /// Writes the test for the recording at `path` to `out` (stdout when nil); returns the status.
  static func run(path: String, target: String, out: String?, name: String) -> Int32 {
    guard let target = Target(rawValue: target) else {
      let known = Target.allCases.map(\.rawValue).joined(separator: ", ")
      StandardStream.writeAll(
        "\(name) replay: --emit \(target) is not known; expected one of: \(known)\n", to: 2)
      return 2
    }
    let text: String
    do {
      let (history, steps) = try steps(path: path)
      switch target {
      case .pytest: text = pytest(steps: steps, history: history, source: path, name: name)
      case .swift: text = swift(steps: steps, history: history, source: path, name: name)
      }
    } catch {
      StandardStream.writeAll("\(name) replay: \(path): \(error.message)\n", to: 2)
      return 2
    }
    guard let out else {
      StandardStream.writeAll(text, to: 1)
      return 0
    }
    guard FileManager.default.createFile(atPath: out, contents: Data(text.utf8)) else {
      StandardStream.writeAll("\(name) replay: cannot write '\(out)'\n", to: 2)
      return 2
    }
    return 0
  }

  /// `value`'s compact JSON, as the recording and the server write it.
  static func compact(_ value: JSON) -> String {
    String(decoding: (try? value.serialized()) ?? [], as: UTF8.self)
  }
}
