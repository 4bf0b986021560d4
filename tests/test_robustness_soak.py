"""A short soak (bench/soak/soak.py, which `make bench` runs for minutes): rounds of mixed load
(effects, stores opened and closed, subscriptions, a reader that stalls), every request
answered, and resident memory back near its baseline afterwards. Twelve rounds are about
36,000 actions: the leak this found (about 1 KB per strictly decoded action, a reference cycle
in the decoder's key ledger) grew the server by more than 20 MB in as many."""
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def test_memory_returns_to_its_baseline_after_mixed_load(stateserver_bin):
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "soak", "soak.py"), stateserver_bin,
         "--seconds", "0", "--rounds", "12", "--slack-mb", "12"],
        capture_output=True, timeout=900)
    result = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert result["unanswered"] == 0 and result["exit"] == 0, result
    assert result["rounds"] >= 12 and result["requests"] > 5000, result
    assert result["returned"], result
    assert done.returncode == 0, result
