#!/usr/bin/env python3
"""History on against history off, measured side by side in one run (rounds interleaved, so a
busy machine slows every variant alike; the best of each is kept).

- pipelined counter increments/s (bench/server/drive.py throughput)
- a notes edit at M notes (drive.py bigstate): history keeps a snapshot of the state every 64
  entries, and the reducer's next edit then copies the containers it touches
- peak resident memory after those runs, and after 2,000 edits at 100,000 notes: what a full
  log of 1000 entries and its snapshots (about 17 copies of the edited containers) cost

- when valgrind is installed: instructions per pipelined increment (callgrind), which a busy
  machine does not disturb

Target: throughput with history on at least 0.9x history off.
"""
import re
import shutil
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVE = os.path.join(HERE, "..", "server", "drive.py")
SCALE = float(os.environ.get("BENCH_SCALE", "1"))
sys.path.insert(0, os.path.join(HERE, "..", "server"))
import drive  # noqa: E402


def n(x):
    return max(1, int(x * SCALE))


def run_drive(*args):
    out = subprocess.run([sys.executable, DRIVE, *map(str, args)], capture_output=True,
                         text=True, timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"drive.py {' '.join(map(str, args))} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def peak_rss_mb(cmd, payload, last, setup=b"", setup_id=None):
    """Runs `payload` pipelined and returns the peak resident memory (VmHWM) in MB."""
    p = drive.spawn(cmd)
    fd = p.stdout.fileno()
    if setup:
        p.stdin.write(setup)
        p.stdin.flush()
        drive.await_id(fd, setup_id)
    writer = threading.Thread(target=lambda: (p.stdin.write(payload), p.stdin.flush()))
    writer.start()
    drive.await_id(fd, last)
    writer.join()
    with open(f"/proc/{p.pid}/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    p.stdin.close()
    p.wait(timeout=60)
    return peak / 1024


def big_state(m, k):
    """Opens a `notes` store of `m` notes, then `k` edits of one note each."""
    notes = [{"id": f"n{i}", "text": f"note {i}", "createdAt": "2026-01-01T00:00:00Z",
              "updatedAt": "2026-01-01T00:00:00Z", "syncStatus": "synchronized"}
             for i in range(m)]
    setup = drive.line(1, "store/open",
                       {"feature": "notes", "store": "bench", "state": {"notes": notes}})
    payload = b"".join(
        drive.line(i, "dispatch", {"store": "bench", "action": {
            "type": "edit", "id": f"n{(i * 7919) % m}", "text": f"edit {i}"}})
        for i in range(2, k + 2))
    return setup, payload, k + 1


def instructions(cmd, payload):
    """Instructions (callgrind's Ir) the server runs for `payload`, start-up included."""
    with tempfile.NamedTemporaryFile() as out, tempfile.NamedTemporaryFile() as data:
        data.write(payload)
        data.flush()
        with open(data.name, "rb") as stdin:
            result = subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", *cmd],
                stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                timeout=1800)
    found = re.search(r"Collected : (\d+)", result.stderr)
    return int(found.group(1)) if found else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    options = parser.parse_args()
    record = tempfile.NamedTemporaryFile(suffix=".ndjson", delete=False).name
    variants = {
        "history off": [options.server, "--ephemeral", "--history", "0"],
        "history 1000": [options.server, "--ephemeral"],
        "history 1000 + --record": [options.server, "--ephemeral", "--record", record],
    }
    total, notes, edits = n(200_000), n(10_000), n(5_000)
    throughput = {name: 0.0 for name in variants}
    edit_us = {name: float("inf") for name in variants}
    for _ in range(3):
        for name, cmd in variants.items():
            if "--record" in cmd:
                open(record, "w").close()  # a fresh file each round
            result = run_drive("throughput", total, "--", *cmd)
            throughput[name] = max(throughput[name], result["per_second"])
            result = run_drive("bigstate", notes, edits, "--", *cmd)
            edit_us[name] = min(edit_us[name], result["per_action_us"])
    memory, big_memory = {}, {}
    payload = b"".join(drive.increment(i) for i in range(1, total + 1))
    big = n(100_000)
    setup, edits_payload, last = big_state(big, 2000)
    for name, cmd in variants.items():
        memory[name] = peak_rss_mb(cmd, payload, total)
        big_memory[name] = peak_rss_mb(cmd, edits_payload, last, setup=setup, setup_id=1)
    os.unlink(record)

    base = throughput["history off"]
    print(f"{'variant':<26}{'increments/s':>14}{'ratio':>8}{f'edit at {notes} notes (us)':>28}"
          f"{'peak RSS (MB)':>15}{f'RSS, {big} notes (MB)':>24}")
    for name in variants:
        print(f"{name:<26}{throughput[name]:>14,.0f}{throughput[name] / base:>7.2f}x"
              f"{edit_us[name]:>28.1f}{memory[name]:>15.1f}{big_memory[name]:>24.1f}")
    if shutil.which("valgrind"):
        count = n(50_000)
        payload = b"".join(drive.increment(i) for i in range(1, count + 1))
        empty = instructions(variants["history off"], b"")
        counted = {name: instructions(cmd, payload) for name, cmd in variants.items()
                   if "--record" not in cmd}
        if empty and all(counted.values()):
            per = {name: (value - empty) / count for name, value in counted.items()}
            print(f"\ninstructions per increment (callgrind, {count:,} increments, start-up "
                  f"subtracted): history off {per['history off']:,.0f}, history 1000 "
                  f"{per['history 1000']:,.0f} ({per['history off'] / per['history 1000']:.2f}x)")
    ratio = throughput["history 1000"] / base
    ok = ratio >= 0.9
    print(f"\nthroughput with history on / off: {ratio:.2f}x (target >= 0.9x): "
          f"{'ok' if ok else 'MISSED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
