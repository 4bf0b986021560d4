"""`stateserver replay --emit pytest FILE` turns a `--record` session into a pytest file that
asserts every line the server answers, in order: the emitted test passes against the binary that
made the recording and fails when the behaviour it recorded changes.

How "fails when a reducer changes" is proved: the server has no switch that makes a reducer
behave differently, so the test changes the other side of the comparison instead. One recorded
patch is edited before emitting (the counter's recorded `/count` becomes 99), which is exactly
what a changed reducer looks like to the emitted test: the recorded patch and the one the server
sends differ. The emitted test must then fail, naming the step."""
import json
import os
import subprocess
import sys

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
    assert "step 1" in result.stdout and "99" in result.stdout


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


def test_an_action_an_effect_sent_is_refused_rather_than_emitted(stateserver_bin, tmp_path):
    """`incrementLater`'s increment arrives when its timer fires, not as an answer to a request:
    a test that expected it after a response would not hold, so the emitter says so."""
    path = tmp_path / "later.ndjson"
    record(stateserver_bin, path, ("counter", {"type": "incrementLater", "afterMs": 10}))
    done = emit(stateserver_bin, path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "was not sent by this client's request" in done.stderr
