"""A short run of `make fuzz` (scripts/fuzz.py): the streaming fuzzer itself works and finds
nothing, so a long run's result can be trusted to mean what it says."""
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


def test_the_ledger_tells_apart_two_replies_with_the_same_id():
    # Found by a 300,965-line run (seed 20261201): a `wait: "settled"` dispatch with `id: null`
    # answered while a parse error (also `id: null`) was due; the first match was taken.
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from test_robustness_oracle import Ledger, expectation_for_bytes
    ledger = Ledger()
    ledger.expect("settled", {"kind": "object", "replies": [{"id": None, "codes": None}],
                              "deferrable": True})
    ledger.segment([])
    ledger.expect("bad", expectation_for_bytes(b"[[[x"))
    ledger.segment([
        {"jsonrpc": "2.0", "id": None, "result": {"store": "profile", "version": 0}},
        {"jsonrpc": "2.0", "id": None,
         "error": {"code": -32700, "message": "Parse error", "data": {}}}])
    ledger.finish([])
    # And a reply that satisfies nothing is still an error.
    ledger.expect("bad", expectation_for_bytes(b"[[[x"))
    try:
        ledger.segment([{"jsonrpc": "2.0", "id": None, "result": {}}])
    except AssertionError:
        return
    raise AssertionError("a result was accepted where -32700 was required")
