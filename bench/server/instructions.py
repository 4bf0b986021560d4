#!/usr/bin/env python3
"""Instructions per pipelined `counter` increment, per thread, counted by callgrind: a figure
the machine's load cannot move, beside run.sh's timings that it does.

  instructions.py --server BIN --echo BIN [--lines N]

Runs each process under `valgrind --tool=callgrind --separate-threads=yes` on N increments
(stdin from a file, stdout to /dev/null) and once on empty input; the difference over N is the
cost per increment. Prints one JSON object: for the echo and the server, the total and the
share of each thread that does real work (numbered by creation: 1 is the main thread, the one
a pipelined stream waits for; the writer and parse-ahead threads follow), and the same for the
calls to Swift's reference counting (swift_retain and swift_release: atomic, so each costs
far more time than its instructions say). Valgrind 3.19 cannot read the DWARF 5 the toolchain
writes, so the server runs as a copy with its debug information stripped (symbols stay).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import drive  # noqa: E402


# Swift seeds its hashing per process, which moved the store's share of the main thread by
# about 300 instructions from run to run; a fixed seed makes the count repeatable.
STEADY_ENV = {**os.environ, "SWIFT_DETERMINISTIC_HASHING": "1"}


REFCOUNTING = {"swift_retain", "swift_release", "swift_retain_n", "swift_release_n"}


def totals(cmd, stdin_path, work, name):
    """Callgrind's instruction totals per thread of `cmd` reading `stdin_path`, and per thread
    the calls to Swift's reference counting (each an atomic `lock xadd`: about 5 ns where a
    plain add is 0.3, a cost the instruction count does not show)."""
    out = os.path.join(work, name)
    with open(stdin_path, "rb") as stdin:
        subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                        f"--callgrind-out-file={out}", *cmd], stdin=stdin,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                       timeout=1800, env=STEADY_ENV)
    counts, refcounts = {}, {}
    for path in sorted(glob.glob(out + "*")):
        suffix = path[len(out):]
        thread = int(suffix.lstrip("-")) if suffix.startswith("-") else 1
        counts[thread], refcounts[thread] = read_profile(path)
    return counts, refcounts


def read_profile(path):
    """The total instructions of one callgrind thread file and its calls to REFCOUNTING.
    Callgrind names a function once (`cfn=(7) name`) and by number alone after that."""
    names, callee, total, calls = {}, None, 0, 0
    with open(path) as profile:
        for line in profile:
            if line.startswith("cfn="):
                number, _, name = line[4:].strip().partition(" ")
                if name:
                    names[number] = name
                callee = names.get(number)
            elif line.startswith("fn="):
                number, _, name = line[3:].strip().partition(" ")
                if name:
                    names[number] = name
            elif line.startswith("calls=") and callee in REFCOUNTING:
                calls += int(line[6:].split()[0])
            elif line.startswith("totals:"):
                total = int(line.split()[1])
    return total, calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--echo", required=True)
    parser.add_argument("--lines", type=int, default=20_000)
    options = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("instructions.py needs valgrind (apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as work:
        payload = os.path.join(work, "increments.ndjson")
        with open(payload, "wb") as f:
            f.write(b"".join(drive.increment(i) for i in range(1, options.lines + 1)))
        empty = os.path.join(work, "empty")
        open(empty, "wb").close()
        server = os.path.join(work, "stateserver")
        subprocess.run(["strip", "--strip-debug", "-o", server, options.server], check=True)
        result = {"lines": options.lines}
        for name, cmd in (("echo", [options.echo]), ("server", [server, "--ephemeral"])):
            busy, busy_rc = totals(cmd, payload, work, name)
            idle, idle_rc = totals(cmd, empty, work, name + "-idle")
            # Start-up runs on the main thread; the other threads' idle cost is a few hundred
            # thousand instructions in all (and they are numbered differently when idle).
            per_thread = {str(t): round((busy[t] - (idle.get(1, 0) if t == 1 else 0))
                                        / options.lines) for t in sorted(busy)}
            shown = {t for t, n in per_thread.items() if n >= 100}
            result[name] = {"per_increment": round((sum(busy.values()) - sum(idle.values()))
                                                   / options.lines),
                            "per_thread": {t: n for t, n in per_thread.items() if t in shown},
                            "refcounting_per_increment": round(
                                (sum(busy_rc.values()) - sum(idle_rc.values())) / options.lines, 1),
                            "refcounting_per_thread": {
                                str(t): round((busy_rc[t] - (idle_rc.get(1, 0) if t == 1 else 0))
                                              / options.lines, 1)
                                for t in sorted(busy_rc) if str(t) in shown}}
        print(json.dumps(result))


if __name__ == "__main__":
    main()
