"""A short run of `make fuzz` (scripts/fuzz.py): the streaming fuzzer itself works and finds
nothing, so a long run's result in the README can be trusted to mean what it says."""
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def run_fuzz(stateserver_bin, lines, seed):
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "fuzz.py"), "--bin", stateserver_bin,
         "--lines", str(lines), "--seed", str(seed), "--chunk", "100"],
        capture_output=True, timeout=600)
    return done.returncode, json.loads(done.stdout.decode().strip().splitlines()[-1])


def test_a_short_seeded_fuzz_run_answers_every_request(stateserver_bin):
    code, summary = run_fuzz(stateserver_bin, 2000, 20261201)
    assert summary["failure"] is None and summary["outcome"] == "ok", summary
    assert summary["lines"] == 2000 and code == 0


def test_the_fuzzer_reports_a_server_that_stops_answering(tmp_path):
    # A "server" that answers nothing and exits: the run must fail, not pass vacuously.
    fake = tmp_path / "silent"
    fake.write_text("#!/bin/sh\nexec cat >/dev/null\n")
    fake.chmod(0o755)
    code, summary = run_fuzz(str(fake), 50, 1)
    assert code != 0 and summary["outcome"] == "failed"
