#!/usr/bin/env python3
"""stdio throughput with and without one attached client that reads nothing, side by side.

Each round starts two cores with `--listen` at once: one alone, one with an attached client
that connects, subscribes to every store (the default) and never reads. Both get the same
pipelined counter increments on stdio at the same moment, so both run under the same machine
load (these 2-core machines are shared: back-to-back runs differ by 2x and more, while two
runs at the same time see the same interference). Each side is measured by its own driver
process. Printed: both throughputs, the median of the rounds' ratios (the target), and the
servers' CPU time per action (user + system), which does not depend on the load.
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sidebyside  # noqa: E402

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
N = max(1000, int(200_000 * SCALE))
ROUNDS = 8
TARGET = 0.9


def line(i, method, params):
    return (json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params},
                       separators=(",", ":")) + "\n").encode()


def await_id(fd, i):
    wanted = (b'"id":%d,' % i, b'"id":%d}' % i)
    tail = b""
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            raise SystemExit(f"the server closed stdout before id {i}")
        window = tail + chunk
        if any(mark in window for mark in wanted):
            return
        tail = chunk[-64:]


def attached_clients(p, i):
    p.stdin.write(line(i, "store/list", {}))
    p.stdin.flush()
    buffer = b""
    while True:
        buffer += os.read(p.stdout.fileno(), 1 << 16)
        for raw in buffer.split(b"\n")[:-1]:
            message = json.loads(raw)
            if message.get("id") == i:
                return message["result"]["attachedClients"]


def side(binary, directory, stalled):
    """One core: set up, say `ready`, wait for `go`, run, print the figures as JSON."""
    path = os.path.join(directory, "stalled.sock" if stalled else "alone.sock")
    p = subprocess.Popen([binary, "--ephemeral", "--listen", path], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=1 << 20)
    peer = None
    ask = N + 1
    attached_clients(p, ask)  # bound and serving
    if stalled:
        peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        peer.connect(path)
        peer.sendall(line(1, "initialize", {}))
        while attached_clients(p, ask) != 1:
            ask += 1
    payload = b"".join(
        line(i, "dispatch", {"store": "counter", "action": {"type": "increment"}})
        for i in range(1, N + 1))
    print("ready", flush=True)
    sys.stdin.readline()
    t0 = time.perf_counter()
    writer = threading.Thread(target=lambda: (p.stdin.write(payload), p.stdin.flush()))
    writer.start()
    await_id(p.stdout.fileno(), N)
    seconds = time.perf_counter() - t0
    writer.join()
    p.stdin.close()
    _, _, usage = os.wait4(p.pid, 0)
    if peer is not None:
        peer.close()
    if os.path.exists(path):
        raise SystemExit("the socket file outlived the core")
    print(json.dumps({"per_second": N / seconds,
                      "cpu_us_per_action": (usage.ru_utime + usage.ru_stime) / N * 1e6}),
          flush=True)


def round_side_by_side(binary, directory, stalled_first):
    """[alone, stalled] figures, the two sides run at once (bench/sidebyside.py)."""
    kinds = ("stalled", "alone") if stalled_first else ("alone", "stalled")
    figures = sidebyside.round_side_by_side(__file__, binary, directory, kinds, timeout=120)
    return [figures["alone"], figures["stalled"]]


def main():
    if len(sys.argv) == 5 and sys.argv[2] == "--side":
        side(sys.argv[1], sys.argv[4], stalled=sys.argv[3] == "stalled")
        return
    binary = sys.argv[1]
    rounds = []
    with tempfile.TemporaryDirectory() as directory:
        for index in range(ROUNDS):
            rounds.append(round_side_by_side(binary, directory, stalled_first=index % 2 == 1))
    alone = [a["per_second"] for a, _ in rounds]
    stalled = [s["per_second"] for _, s in rounds]
    ratios = [s / a for a, s in zip(alone, stalled)]
    ratio = statistics.median(ratios)
    cpu_alone = statistics.median(a["cpu_us_per_action"] for a, _ in rounds)
    cpu_stalled = statistics.median(s["cpu_us_per_action"] for _, s in rounds)
    print(f"stdio throughput, {N} pipelined increments, {ROUNDS} rounds, both sides at once")
    print(f"  no attached client (median)              {statistics.median(alone):>10,.0f} actions/s"
          f"   {cpu_alone:.2f} us CPU per action")
    print(f"  one attached client, reads none (median) {statistics.median(stalled):>10,.0f} actions/s"
          f"   {cpu_stalled:.2f} us CPU per action")
    print("  rounds' ratios                           " + " ".join(f"{r:.2f}" for r in ratios))
    print(f"  CPU per action, stalled / alone          {cpu_stalled / cpu_alone:>10.2f}")
    ok = ratio >= TARGET
    print(f"  throughput ratio (median of the rounds)  {ratio:>10.2f}  (target >= {TARGET}) "
          f"{'ok' if ok else 'MISSED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
