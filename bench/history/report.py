#!/usr/bin/env python3
"""History on against history off, measured side by side in one run (rounds interleaved, so a
busy machine slows every variant alike; the best of each is kept).

- pipelined counter increments/s (bench/server/drive.py throughput)
- a notes edit at 10,000 and at 100,000 notes (drive.py bigstate): history keeps the published
  view (JSON) every 64 entries, and the next publication then copies the containers it edits
- peak resident memory after those runs, and after 2,000 edits at 100,000 notes: what a full
  log of 1000 to 1063 entries, its checkpoint and its view snapshots (about 17) cost
- `state/get` at a past version at 100,000 notes after 1,500 edits (the log full, its checkpoint
  moved on): the time of one request, at versions spread over those history holds; with
  `--baseline-server BIN`, the same against another build side by side (before and after)

- when valgrind is installed: instructions per pipelined increment and per notes edit at
  100,000 notes (callgrind, counted from after the set-up), which a busy machine does not
  disturb

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


def past_states(cmd, m, edits, reads):
    """`state/get {version}` request by request at `reads` versions spread over those history
    holds, after `edits` edits at `m` notes; returns (median, max) in milliseconds. Each asks
    for one note (`path`), so the time is finding the past state, not writing it out."""
    setup, payload, last = big_state(m, edits)
    p = drive.spawn(cmd)
    fd = p.stdout.fileno()
    p.stdin.write(setup + payload)
    p.stdin.flush()
    drive.await_id(fd, last)
    rid = last + 1
    p.stdin.write(drive.line(rid, "history/get", {"store": "bench", "limit": 1}))
    p.stdin.flush()
    reply, held = b"", None
    while held is None:
        reply += os.read(fd, 1 << 20)
        *complete, reply = reply.split(b"\n")
        for x in complete:
            if x.startswith(b'{"jsonrpc":"2.0","id":%d,' % rid):
                held = json.loads(x)["result"]
    first, current = held["first"], held["version"]
    samples = []
    for k in range(reads):
        rid += 1
        version = first + (current - 1 - first) * k // max(1, reads - 1)
        t0 = time.perf_counter()
        p.stdin.write(drive.line(rid, "state/get",
                                 {"store": "bench", "version": version, "path": "/notes/0"}))
        p.stdin.flush()
        drive.await_id(fd, rid)
        samples.append((time.perf_counter() - t0) * 1e3)
    p.stdin.close()
    p.wait(timeout=60)
    samples.sort()
    return samples[len(samples) // 2], samples[-1]


def valgrind_copy(server, directory):
    """valgrind cannot read the debug information of our release binary (\"possibly corrupted
    debuginfo\"); a copy without it (symbols kept) runs."""
    copy = os.path.join(directory, "stateserver")
    if shutil.which("objcopy"):
        subprocess.run(["objcopy", "--strip-debug", server, copy], check=True)
        return copy
    return server


def instructions(cmd, payload, setup=b"", setup_id=None):
    """Instructions (callgrind's Ir) the server runs for `payload` alone: counting starts once
    `setup` (and start-up) is answered (`callgrind_control -i on`)."""
    with tempfile.NamedTemporaryFile() as out:
        p = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no",
             f"--callgrind-out-file={out.name}", *cmd],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        fd = p.stdout.fileno()
        p.stdin.write(setup or drive.line(setup_id or 0, "store/list", {}))
        p.stdin.flush()
        drive.await_id(fd, setup_id or 0)
        subprocess.run(["callgrind_control", "-i", "on", str(p.pid)], capture_output=True)
        last = int(json.loads(payload.splitlines()[-1])["id"])
        writer = threading.Thread(target=lambda: (p.stdin.write(payload), p.stdin.flush()))
        writer.start()
        drive.await_id(fd, last)
        writer.join()
        subprocess.run(["callgrind_control", "-i", "off", str(p.pid)], capture_output=True)
        p.stdin.close()
        while os.read(fd, 1 << 20):
            pass
        stderr = p.stderr.read().decode()
        p.wait(timeout=600)
    found = re.search(r"Collected : (\d+)", stderr)
    return int(found.group(1)) if found else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--baseline-server", help="another build, for state/get side by side")
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
    big = n(100_000)
    big_edit_us = {name: float("inf") for name in variants}
    for _ in range(2):
        for name, cmd in variants.items():
            if "--record" in cmd:
                continue
            result = run_drive("bigstate", big, n(2_000), "--", *cmd)
            big_edit_us[name] = min(big_edit_us[name], result["per_action_us"])
    builds = {"this build": options.server}
    if options.baseline_server:
        builds["baseline build"] = options.baseline_server
    past = {}
    for _ in range(2):
        for name, server in builds.items():
            median, worst = past_states([server, "--ephemeral"], big, n(1_500), 41)
            best = past.get(name, (float("inf"), float("inf")))
            past[name] = (min(best[0], median), min(best[1], worst))
    memory, big_memory = {}, {}
    payload = b"".join(drive.increment(i) for i in range(1, total + 1))
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
    off, on = big_edit_us["history off"], big_edit_us["history 1000"]
    print(f"\nnotes edit at {big:,} notes: history off {off:.1f} us, history 1000 {on:.1f} us "
          f"({on / off:.2f}x)")
    for name, (median, worst) in past.items():
        print(f"state/get at a past version, {big:,} notes, {name}: median {median:.2f} ms, "
              f"max {worst:.2f} ms (41 versions over those held)")
    if shutil.which("valgrind") and shutil.which("callgrind_control"):
        with tempfile.TemporaryDirectory() as directory:
            binary = valgrind_copy(options.server, directory)
            plain = {name: [binary, *cmd[1:]] for name, cmd in variants.items()
                     if "--record" not in cmd}
            count = n(50_000)
            payload = b"".join(drive.increment(i) for i in range(1, count + 1))
            per = {name: (instructions(cmd, payload) or 0) / count for name, cmd in plain.items()}
            edits = n(1_000)
            setup, edits_payload, _ = big_state(big, edits)
            per_edit = {name: (instructions(cmd, edits_payload, setup, 1) or 0) / edits
                        for name, cmd in plain.items()}
        if all(per.values()) and all(per_edit.values()):
            off, on = per["history off"], per["history 1000"]
            print(f"\ninstructions per increment (callgrind, {count:,} increments): history off "
                  f"{off:,.0f}, history 1000 {on:,.0f} ({on / off:.2f}x)")
            off, on = per_edit["history off"], per_edit["history 1000"]
            print(f"instructions per notes edit at {big:,} notes (callgrind, {edits:,} edits): "
                  f"history off {off:,.0f}, history 1000 {on:,.0f} ({on / off:.2f}x)")
    ratio = throughput["history 1000"] / base
    ok = ratio >= 0.9
    print(f"\nthroughput with history on / off: {ratio:.2f}x (target >= 0.9x): "
          f"{'ok' if ok else 'MISSED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
