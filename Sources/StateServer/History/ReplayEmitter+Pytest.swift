import JSON

/// `--emit pytest`: a pytest file that spawns the server and asserts the steps over its stdio.
extension ReplayEmitter {
  /// A Python string literal of `value`'s compact JSON.
  private static func literal(_ value: JSON) -> String {
    var escaped = "'"
    for character in compact(value) {
      if character == "\\" || character == "'" { escaped.append("\\") }
      escaped.append(character)
    }
    return escaped + "'"
  }

  static func pytest(steps: [Step], history: Int64, source: String, name: String) -> String {
    var text = """
      \"\"\"Emitted by `\(name) replay --emit pytest` from the recording \(source).

      Spawns the server ($STATESERVER_BIN, else `\(name)` on PATH) with
      `--ephemeral --clock virtual --history \(history)`, sends each recorded request in order
      (each dispatch, and a clock/advance to when each effect's action was recorded) and asserts
      that every line the server answers (each state/patch, each store/event, the response)
      equals the recorded one, in order. Compared loosely: the values of the keys `at` and
      `durationUs`, and ISO 8601 timestamps (which read the wall clock), differ on every run and
      only have to be present. A server that does not answer within READ_TIMEOUT seconds
      ($REPLAY_READ_TIMEOUT, default 10) fails the test, naming the step.
      \"\"\"
      import json
      import os
      import queue
      import re
      import shutil
      import subprocess
      import threading

      VOLATILE = {"at", "durationUs"}
      TIMESTAMP = re.compile(r"\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z")
      READ_TIMEOUT = float(os.environ.get("REPLAY_READ_TIMEOUT", "10"))

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
          if isinstance(value, str) and TIMESTAMP.fullmatch(value):
              return "<timestamp>"
          return value


      def read_lines(stream, lines):
          for line in stream:
              lines.put(line)
          lines.put(None)


      def stream(line):
          store = (line.get("params") or {}).get("store")
          return f"store {store}" if store else line.get("method", "responses")


      def test_recording():
          binary = os.environ.get("STATESERVER_BIN") or shutil.which("\(name)")
          assert binary, "set STATESERVER_BIN or put \(name) on PATH"
          server = subprocess.Popen(
              [binary, "--ephemeral", "--clock", "virtual", "--history", "\(history)"],
              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
          # A thread reads stdout, so that a server that stops answering fails the test after
          # READ_TIMEOUT instead of blocking it (and CI) in readline.
          lines = queue.Queue()
          threading.Thread(target=read_lines, args=(server.stdout, lines), daemon=True).start()

          def exchange(number, request):
              server.stdin.write(request + "\\n")
              server.stdin.flush()
              want_id = json.loads(request)["id"]
              others = []
              while True:
                  try:
                      line = lines.get(timeout=READ_TIMEOUT)
                  except queue.Empty:
                      raise AssertionError(
                          f"step {number}: no answer within {READ_TIMEOUT:g} s to {request}; "
                          f"the server hangs (received meanwhile: {others})") from None
                  assert line, f"step {number}: the server closed before answering {request}"
                  line = json.loads(line)
                  if line.get("id") == want_id and "method" not in line:
                      return line, others
                  others.append(line)

          # Each response is compared at its step; each store's patches and events in their
          # order over the session, not the order of two stores' lines: an effect that sends
          # without sleeping on the clock runs beside the requests.
          received, expected = {}, {}
          try:
              for number, (request, recorded) in enumerate(STEPS, 1):
                  answer, others = exchange(number, request)
                  recorded = [json.loads(line) for line in recorded]
                  assert loose(answer) == loose(recorded[-1]), f"step {number}: {request}"
                  for line in others:
                      received.setdefault(stream(line), []).append(line)
                  for line in recorded[:-1]:
                      expected.setdefault(stream(line), []).append((number, line))
              settle = ('{"jsonrpc":"2.0","id":"replay: settled","method":"clock/advance",'
                        '"params":{"ms":0}}')
              for line in exchange(len(STEPS) + 1, settle)[1]:
                  received.setdefault(stream(line), []).append(line)
              for key in sorted(set(received) | set(expected)):
                  got, want = received.get(key, []), expected.get(key, [])
                  for position in range(max(len(got), len(want))):
                      line = got[position] if position < len(got) else None
                      step, recorded = want[position] if position < len(want) else (None, None)
                      where = f"step {step}" if step else "after the last step"
                      assert loose(line) == loose(recorded), (
                          f"{key}, line {position + 1} of it ({where}): received {line}, "
                          f"recorded {recorded}")
          finally:
              server.stdin.close()
              try:
                  server.wait(timeout=READ_TIMEOUT)
              except subprocess.TimeoutExpired:
                  server.kill()
                  server.wait()

      """
    return text
  }
}
