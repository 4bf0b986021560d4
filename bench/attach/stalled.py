#!/usr/bin/env python3
"""stdio throughput with and without one attached client that reads nothing.

Rounds alternate (none, stalled, none, stalled, ...) so both see the same machine load; each
round is a fresh core with `--listen`, and the figure is the median of each side. The stalled
client connects, subscribes to every store (the default) and never reads: its queue coalesces
the counter's patches on its own while the stdio client is served at full speed.
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

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
N = max(1000, int(200_000 * SCALE))
ROUNDS = 5
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


def round_trip(binary, directory, stalled):
    path = os.path.join(directory, "core.sock")
    p = subprocess.Popen([binary, "--ephemeral", "--listen", path], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=1 << 20)
    peer = None
    first = N + 1
    attached_clients(p, first)  # bound and serving
    if stalled:
        peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        peer.connect(path)
        peer.sendall(line(1, "initialize", {}))
        ask = first + 1
        while attached_clients(p, ask) != 1:
            ask += 1
    payload = b"".join(
        line(i, "dispatch", {"store": "counter", "action": {"type": "increment"}})
        for i in range(1, N + 1))
    t0 = time.perf_counter()
    writer = threading.Thread(target=lambda: (p.stdin.write(payload), p.stdin.flush()))
    writer.start()
    await_id(p.stdout.fileno(), N)
    seconds = time.perf_counter() - t0
    writer.join()
    p.stdin.close()
    p.wait(timeout=60)
    if peer is not None:
        peer.close()
    if os.path.exists(path):
        raise SystemExit("the socket file outlived the core")
    return N / seconds


def main():
    binary = sys.argv[1]
    alone, with_stalled = [], []
    with tempfile.TemporaryDirectory() as directory:
        for _ in range(ROUNDS):
            alone.append(round_trip(binary, directory, stalled=False))
            with_stalled.append(round_trip(binary, directory, stalled=True))
    a, s = statistics.median(alone), statistics.median(with_stalled)
    ratio = s / a
    print(f"stdio throughput, {N} pipelined increments, median of {ROUNDS} alternating rounds")
    print(f"  no attached client              {a:>12,.0f} actions/s")
    print(f"  one attached client, reads none {s:>12,.0f} actions/s")
    ok = ratio >= TARGET
    print(f"  ratio                           {ratio:>12.2f}  (target >= {TARGET}) "
          f"{'ok' if ok else 'MISSED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
