"""A `--record` file names the application that made it (the name and version given to
`Server.main`), not only the stateserver library: `replay` shows it, refuses another
application's recording with status 2 (as another fingerprint), and replays another version of
the same application when the fingerprints match, with a note on stderr."""
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TIMERS = ROOT / "Examples" / "Timers" / ".build" / "debug" / "timers"


def requests(*actions):
    return "".join(
        json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "dispatch",
                    "params": {"store": store, "action": action}}) + "\n"
        for i, (store, action) in enumerate(actions))


def record(binary, path, *actions):
    done = subprocess.run([binary, "--ephemeral", "--record", str(path)], input=requests(*actions),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in path.read_text().splitlines()]


def replay(binary, path):
    return subprocess.run([binary, "replay", str(path)], capture_output=True, text=True,
                          timeout=120)


def write(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def version_of(binary):
    return subprocess.run([binary, "--version"], capture_output=True, text=True,
                          timeout=30).stdout.split()[-1]


@pytest.fixture
def recording(stateserver_bin, tmp_path):
    return record(stateserver_bin, tmp_path / "counter.ndjson",
                  ("counter", {"type": "increment"}), ("counter", {"type": "increment"}))


def test_the_header_names_the_application_and_replay_shows_it(stateserver_bin, recording,
                                                              tmp_path):
    header = recording[0]
    version = version_of(stateserver_bin)
    assert header["application"] == {"name": "stateserver", "version": version}
    assert isinstance(header["server"], str)
    result = replay(stateserver_bin, tmp_path / "counter.ndjson")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["replay"] == "match"
    assert summary["application"] == {"name": "stateserver", "version": version}
    assert result.stderr == ""


def test_another_applications_recording_is_refused_with_status_2(stateserver_bin, recording,
                                                                 tmp_path):
    # Same features, same fingerprints: only the application's name differs.
    header = dict(recording[0], application={"name": "timers", "version": "1.0.0"})
    result = replay(stateserver_bin, write(tmp_path / "other.ndjson", [header, *recording[1:]]))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "timers 1.0.0" in result.stderr and "timers replay" in result.stderr


def test_another_version_of_the_same_application_replays_with_a_note(stateserver_bin, recording,
                                                                     tmp_path):
    header = dict(recording[0], application={"name": "stateserver", "version": "0.0.1-old"})
    result = replay(stateserver_bin, write(tmp_path / "old.ndjson", [header, *recording[1:]]))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["application"]["version"] == "0.0.1-old"
    assert "stateserver 0.0.1-old" in result.stderr
    assert f"stateserver {version_of(stateserver_bin)}" in result.stderr


def test_a_recording_made_before_headers_named_the_application_still_replays(
        stateserver_bin, recording, tmp_path):
    header = {key: value for key, value in recording[0].items() if key != "application"}
    result = replay(stateserver_bin, write(tmp_path / "older.ndjson", [header, *recording[1:]]))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["application"] is None


def test_the_example_application_records_its_own_name_and_replays_only_itself(
        stateserver_bin, tmp_path):
    if not TIMERS.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{TIMERS} is not built (make example-test builds it)")
        pytest.skip(f"{TIMERS} is not built (make example-test builds it)")
    path = tmp_path / "timers.ndjson"
    lines = record(str(TIMERS), path, ("timers", {"type": "start", "seconds": 5}),
                   ("timers", {"type": "stop"}))
    assert lines[0]["application"] == {"name": "timers", "version": "1.0.0"}
    assert any(line["type"] == "entry" for line in lines)
    ours = replay(str(TIMERS), path)
    assert ours.returncode == 0, ours.stderr
    assert json.loads(ours.stdout)["application"] == {"name": "timers", "version": "1.0.0"}
    theirs = replay(stateserver_bin, path)
    assert theirs.returncode == 2 and "timers 1.0.0" in theirs.stderr
