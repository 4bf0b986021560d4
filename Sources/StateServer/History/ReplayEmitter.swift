import FoundationEssentials
import JSON

/// `stateserver replay --emit pytest FILE`: turns a `--record` session into a pytest file, so a
/// bug report's recording becomes a regression test.
///
/// A recording holds each store's history, not the wire: the emitter rebuilds, from every action
/// entry a client's request caused, the `dispatch` request that made it (with the recorded id,
/// so `cause` matches) and the lines the server answered it with: the `state/patch` (when the
/// patch is not empty), one `store/event` per recorded event, then the response. The emitted
/// test spawns the server, sends each request, reads up to its response and asserts every line
/// equals the recorded one, in order.
///
/// Refused (status 2, a message on stderr): a file that is not a recording, and entries the
/// wire alone cannot reproduce in order (rewinds, skips, actions or events an effect sent):
/// those need the virtual clock or history requests, which the recording does not name.
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

  struct Refusal: Error {
    var message: String
    init(_ message: String) { self.message = message }
  }

  /// Writes the test for the recording at `path` to `out` (stdout when nil); returns the status.
  static func run(path: String, target: String, out: String?, name: String) -> Int32 {
    guard let target = Target(rawValue: target) else {
      let known = Target.allCases.map(\.rawValue).joined(separator: ", ")
      StandardStream.writeAll(
        "\(name) replay: --emit \(target) is not known; expected one of: \(known)\n", to: 2)
      return 2
    }
    guard target == .pytest else {
      StandardStream.writeAll(
        "\(name) replay: --emit swift is not written yet; use --emit pytest\n", to: 2)
      return 2
    }
    let text: String
    do {
      let (history, steps) = try steps(path: path)
      text = pytest(steps: steps, history: history, source: path, name: name)
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

  /// The recording's history bound (a flag of the server the test spawns) and its steps.
  static func steps(path: String) throws(Refusal) -> (history: Int64, steps: [Step]) {
    guard let data = FileManager.default.contents(atPath: path),
      let text = String(data: data, encoding: .utf8)
    else { throw Refusal("cannot read the file as UTF-8 text") }
    var history: Int64 = 1000
    var versions: [String: Int64] = [:]
    var steps: [Step] = []
    let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
    for (index, text) in lines.enumerated() {
      let number = index + 1
      let line: JSON
      do {
        line = try JSON(parsing: String(text))
      } catch {
        throw Refusal("line \(number) is not JSON: \(error)")
      }
      let type = line["type"]?.stringValue
      if number == 1 && type != "header" {
        throw Refusal("line 1 is not a recording header (expected {\"type\": \"header\", ...})")
      }
      switch type {
      case "header":
        history = line["history"]?.integerValue ?? 1000
      case "open":
        guard let store = line["store"]?.stringValue, let version = line["version"]?.integerValue
        else { throw Refusal("line \(number): an open line needs a store and a version") }
        versions[store] = version
      case "entry":
        steps.append(try step(line, number: number, versions: &versions))
      default:
        continue
      }
    }
    return (history, steps)
  }

  private static func step(_ line: JSON, number: Int, versions: inout [String: Int64])
    throws(Refusal) -> Step
  {
    guard let store = line["store"]?.stringValue, let version = line["version"]?.integerValue,
      let patch = line["patch"]?.arrayValue
    else { throw Refusal("line \(number): an entry needs a store, a version and a patch") }
    let from = versions[store] ?? 0
    versions[store] = version
    switch line["kind"]?.stringValue {
    case "action": break
    case "events":
      // Events an effect emitted reach the client when the effect runs, between answers.
      throw Refusal(
        "line \(number): the events an effect emitted on '\(store)' arrive when it runs, not "
          + "as an answer; --emit reproduces dispatched actions only")
    case let kind:
      throw Refusal(
        "line \(number): a \(kind ?? "kindless") entry cannot be emitted as a request; "
          + "--emit reproduces dispatched actions only")
    }
    // An effect's action names the action that started the effect (`origin.action`) beside
    // the request: the server sends it when the effect's timer fires, not as an answer.
    guard let action = line["action"], let id = line["origin"]?["request"],
      line["origin"]?["client"] == nil, line["origin"]?["action"] == nil
    else {
      throw Refusal(
        "line \(number): the action on '\(store)' was not sent by this client's request (an "
          + "effect's or an attached client's); --emit reproduces dispatched actions only")
    }
    var expected: [JSON] = []
    if !patch.isEmpty {
      expected.append(
        PatchNotice(
          store: store, path: "", from: UInt64(max(0, from)), to: UInt64(version),
          operations: patch, cause: id
        ).json)
    }
    for event in line["events"]?.arrayValue ?? [] {
      expected.append([
        "jsonrpc": "2.0", "method": "store/event",
        "params": ["store": .string(store), "event": event],
      ])
    }
    expected.append([
      "jsonrpc": "2.0", "id": id,
      "result": ["store": .string(store), "version": .integer(version)],
    ])
    let request: JSON = [
      "jsonrpc": "2.0", "id": id, "method": "dispatch",
      "params": ["store": .string(store), "action": action],
    ]
    return Step(request: request, expected: expected)
  }

  /// A Python string literal of `value`'s compact JSON.
  private static func literal(_ value: JSON) -> String {
    let text = String(decoding: (try? value.serialized()) ?? [], as: UTF8.self)
    var escaped = "'"
    for character in text {
      if character == "\\" || character == "'" { escaped.append("\\") }
      escaped.append(character)
    }
    return escaped + "'"
  }

  static func pytest(steps: [Step], history: Int64, source: String, name: String) -> String {
    var text = """
      \"\"\"Emitted by `\(name) replay --emit pytest` from the recording \(source).

      Spawns the server ($STATESERVER_BIN, else `\(name)` on PATH) with
      `--ephemeral --history \(history)`, sends each recorded dispatch in order and asserts that
      every line the server answers (the state/patch, each store/event, the response) equals
      the recorded one, in order. Compared loosely, wherever a line carries them: the keys `at`
      and `durationUs` (timestamps and timings, which differ on every run) only have to be
      present. The recording's `at` times are not replayed: each request is sent once the one
      before it is answered.
      \"\"\"
      import json
      import os
      import shutil
      import subprocess

      VOLATILE = {"at", "durationUs"}

      # (request, [the lines it is answered with, in order])
      STEPS = [

      """
    for step in steps {
      text += "    (\(literal(step.request)),\n     [\n"
      for line in step.expected { text += "      \(literal(line)),\n" }
      text += "     ]),\n"
    }
    text += """
      ]


      def loose(value):
          if isinstance(value, dict):
              return {k: ("<volatile>" if k in VOLATILE else loose(v)) for k, v in value.items()}
          if isinstance(value, list):
              return [loose(v) for v in value]
          return value


      def test_recording():
          binary = os.environ.get("STATESERVER_BIN") or shutil.which("\(name)")
          assert binary, "set STATESERVER_BIN or put \(name) on PATH"
          server = subprocess.Popen(
              [binary, "--ephemeral", "--history", "\(history)"], stdin=subprocess.PIPE,
              stdout=subprocess.PIPE, text=True)
          try:
              for number, (request, expected) in enumerate(STEPS, 1):
                  server.stdin.write(request + "\\n")
                  server.stdin.flush()
                  want_id = json.loads(request)["id"]
                  received = []
                  while True:
                      line = server.stdout.readline()
                      assert line, f"step {number}: the server closed before answering {request}"
                      received.append(json.loads(line))
                      if received[-1].get("id") == want_id and "method" not in received[-1]:
                          break
                  want = [json.loads(e) for e in expected]
                  assert loose(received) == loose(want), f"step {number}: {request}"
          finally:
              server.stdin.close()
              server.wait(timeout=30)

      """
    return text
  }
}
