"""`stateserver replay --emit pytest|swift FILE` turns a `--record` session into a test that
asserts every line the server answers, in order: the emitted test passes against the binary that
made the recording and fails when the behaviour it recorded changes. An effect's action becomes
a `clock/advance` on the test's virtual clock. The Swift test emitted from a checked-in recording
is checked in too (Tests/FeaturesTests/Recorded), built and run by `swift test`.

How "fails when a reducer changes" is proved: the server has no switch that makes a reducer
behave differently, so the test changes the other side of the comparison instead. One recorded
patch is edited before emitting (the counter's recorded `/count` becomes 99), which is exactly
what a changed reducer looks like to the emitted test: the recorded patch and the one the server
sends differ. The emitted test must then fail, naming the step."""
import json
import os
import subprocess
import sys
from pathlib import Path

from test_recording_application import record

ACTIONS = [
    ("counter", {"type": "increment"}),
    ("counter", {"type": "increment"}),
    ("cart", {"type": "add", "id": "a", "name": "Apple", "price": 3}),
    ("counter", {"type": "decrement"}),
]


def emit(binary, recording, *extra):
    return subprocess.run([binary, "replay", "--emit", "pytest", *extra, str(recording)],
                          capture_output=True, text=True, timeout=60)


def run_emitted(binary, path):
    env = dict(os.environ, STATESERVER_BIN=binary)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(path)], capture_output=True, text=True, timeout=120, env=env,
                          cwd=path.parent)


def recorded(stateserver_bin, tmp_path):
    path = tmp_path / "session.ndjson"
    record(stateserver_bin, path, *ACTIONS)
    return path


def test_the_emitted_test_passes_on_the_recordings_build(stateserver_bin, tmp_path):
    recording = recorded(stateserver_bin, tmp_path)
    done = emit(stateserver_bin, recording)
    assert done.returncode == 0, done.stderr
    test = tmp_path / "emitted" / "test_session.py"
    test.parent.mkdir()
    test.write_text(done.stdout)
    assert "def test_recording" in done.stdout and "durationUs" in done.stdout
    assert done.stdout.count('"method":"dispatch"') == 4
    result = run_emitted(stateserver_bin, test)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_the_emitted_test_fails_when_a_recorded_patch_differs(stateserver_bin, tmp_path):
    recording = recorded(stateserver_bin, tmp_path)
    lines = [json.loads(line) for line in recording.read_text().splitlines()]
    entry = next(line for line in lines if line["type"] == "entry" and line["store"] == "counter")
    entry["patch"] = [{"op": "replace", "path": "/count", "value": 99}]
    recording.write_text("".join(json.dumps(line) + "\n" for line in lines))
    test = tmp_path / "emitted" / "test_changed.py"
    test.parent.mkdir()
    done = emit(stateserver_bin, recording, "--out", str(test))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    result = run_emitted(stateserver_bin, test)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "store counter, line 1 of it (step 1)" in result.stdout and "99" in result.stdout


def test_an_unknown_target_is_refused_with_the_known_ones(stateserver_bin, tmp_path):
    recording = recorded(stateserver_bin, tmp_path)
    done = subprocess.run([stateserver_bin, "replay", "--emit", "jest", str(recording)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "--emit jest is not known; expected one of: pytest, swift" in done.stderr


def test_a_file_that_is_not_a_recording_is_refused(stateserver_bin, tmp_path):
    path = tmp_path / "not.ndjson"
    path.write_text('{"type": "entry"}\n')
    done = emit(stateserver_bin, path)
    assert done.returncode == 2
    assert "line 1 is not a recording header" in done.stderr


def test_replay_without_emit_still_compares(stateserver_bin, tmp_path):
    recording = recorded(stateserver_bin, tmp_path)
    done = subprocess.run([stateserver_bin, "replay", str(recording)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["replay"] == "match"


def test_an_effects_action_becomes_a_clock_advance_and_the_test_passes(stateserver_bin, tmp_path):
    """`incrementLater`'s increment arrives when its timer fires, not as an answer to a request:
    recorded in real time, it is emitted as a `clock/advance` by the time the recording's clock
    moved between the dispatch and it (at least the 10 ms asked), on the test's virtual clock."""
    path = tmp_path / "later.ndjson"
    record(stateserver_bin, path, ("counter", {"type": "incrementLater", "afterMs": 10}))
    done = emit(stateserver_bin, path)
    assert done.returncode == 0, done.stderr
    assert '"method":"clock/advance"' in done.stdout
    test = tmp_path / "emitted" / "test_later.py"
    test.parent.mkdir()
    test.write_text(done.stdout)
    result = run_emitted(stateserver_bin, test)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_debounced_search_recorded_on_the_virtual_clock_becomes_a_passing_test(
        stateserver_bin, tmp_path):
    recording = tmp_path / "search.ndjson"
    record_session(stateserver_bin, recording)
    test = tmp_path / "emitted" / "test_search.py"
    test.parent.mkdir()
    done = emit(stateserver_bin, recording, "--out", str(test))
    assert done.returncode == 0, done.stderr
    text = test.read_text()
    # The debounce fires at 300 ms and the backend answers 50 ms later; `lastUpdated`, a
    # wall-clock timestamp, is masked.
    assert '"now":350' in text and "lastUpdated" in text
    result = run_emitted(stateserver_bin, test)
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_effects_action_without_the_clock_reading_is_refused(stateserver_bin, tmp_path):
    """A recording made before entries carried `clockMs`: its `at` is wall time, which a session
    on the virtual clock does not move, so when the effect's action happened is unknown."""
    path = tmp_path / "old.ndjson"
    lines = record(stateserver_bin, path, ("counter", {"type": "incrementLater", "afterMs": 10}))
    for line in lines:
        line.pop("clockMs", None)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = emit(stateserver_bin, path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "an effect's action on 'counter' carries no clockMs" in done.stderr


def test_a_server_that_stops_answering_fails_the_emitted_test_in_time(stateserver_bin, tmp_path):
    recording = recorded(stateserver_bin, tmp_path)
    test = tmp_path / "emitted" / "test_hang.py"
    test.parent.mkdir()
    assert emit(stateserver_bin, recording, "--out", str(test)).returncode == 0
    # Reads its input and never answers; its stdout stays open.
    hanging = tmp_path / "hanging-server"
    hanging.write_text("#!/bin/sh\ncat > /dev/null\n")
    hanging.chmod(0o755)
    env = dict(os.environ, STATESERVER_BIN=str(hanging), REPLAY_READ_TIMEOUT="0.5")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(test)], capture_output=True, text=True, timeout=60, env=env,
                            cwd=test.parent)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "step 1: no answer within 0.5 s" in result.stdout and "the server hangs" in result.stdout


# The session behind the checked-in Swift test (Tests/FeaturesTests/Recorded): dispatches to
# three stores, the users search's 300 ms debounce and the backend's 50 ms latency, and
# `incrementLater`, on the virtual clock; each request sent once the one before is answered.
SESSION = [
    ("dispatch", {"store": "counter", "action": {"type": "increment"}}),
    ("dispatch", {"store": "cart", "action": {"type": "add", "id": "a", "name": "Apple",
                                              "price": 3}}),
    ("dispatch", {"store": "users", "action": {"type": "load"}}),
    ("clock/advance", {"ms": 50}),
    ("dispatch", {"store": "users", "action": {"type": "search", "query": "c"}}),
    ("dispatch", {"store": "users", "action": {"type": "search", "query": "carla"}}),
    ("clock/advance", {"ms": 299}),
    ("clock/advance", {"ms": 51}),
    ("dispatch", {"store": "counter", "action": {"type": "incrementLater", "afterMs": 10}}),
    ("clock/advance", {"ms": 10}),
]
ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path("tests") / "recordings" / "replay-session.ndjson"
EMITTED = Path("Tests") / "FeaturesTests" / "Recorded" / "ReplaySessionTests.swift"


def record_session(binary, path):
    """Records SESSION on the virtual clock, waiting for each answer as a client would."""
    server = subprocess.Popen([binary, "--ephemeral", "--clock", "virtual", "--record", str(path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        for number, (method, params) in enumerate(SESSION, 1):
            server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method,
                                           "params": params}) + "\n")
            server.stdin.flush()
            while True:
                line = json.loads(server.stdout.readline())
                if line.get("id") == number:
                    assert "result" in line, line
                    break
    finally:
        server.stdin.close()
        assert server.wait(timeout=30) == 0


def test_the_checked_in_swift_test_is_what_the_emitter_writes(stateserver_bin):
    """Tests/FeaturesTests/Recorded/ReplaySessionTests.swift is `replay --emit swift` of the
    checked-in recording, compiled and run by `swift test` (FeaturesTests): regenerated here
    and compared, so the Swift test the emitter writes is the one that builds and passes.
    REGENERATE_REPLAY_SESSION=1 records the session again (after a feature's schema changed,
    say) and rewrites both files."""
    if os.environ.get("REGENERATE_REPLAY_SESSION") == "1":
        (ROOT / FIXTURE).unlink(missing_ok=True)
        record_session(stateserver_bin, ROOT / FIXTURE)
        done = subprocess.run([stateserver_bin, "replay", "--emit", "swift", "--out", str(EMITTED),
                               str(FIXTURE)], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    replayed = subprocess.run([stateserver_bin, "replay", str(FIXTURE)], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
    assert replayed.returncode == 0, (
        f"{FIXTURE} no longer replays on this build ({replayed.stderr.strip()}); record it "
        "again: REGENERATE_REPLAY_SESSION=1 pytest tests/test_replay_emit.py")
    done = subprocess.run([stateserver_bin, "replay", "--emit", "swift", str(FIXTURE)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (ROOT / EMITTED).read_text(), (
        f"{EMITTED} is not what `replay --emit swift {FIXTURE}` writes; regenerate it: "
        "REGENERATE_REPLAY_SESSION=1 pytest tests/test_replay_emit.py")
    assert done.stdout.count("method\":\"clock/advance") >= 3
