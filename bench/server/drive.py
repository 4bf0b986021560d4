#!/usr/bin/env python3
"""The server benchmark's driver: speaks the protocol (docs/reference/protocol.md) to any NDJSON JSON-RPC process.

  drive.py throughput N -- CMD...   N pipelined counter increments; time to the Nth response
  drive.py latency K -- CMD...      K request/response round trips; p50/p99 in microseconds
  drive.py startup R -- CMD...      R starts; time from spawn to the `initialize` response, and
                                    resident memory once idle after it
  drive.py bigstate M K -- CMD...   open a `notes` store with M notes, then K pipelined edits
                                    of one note each; time per edit

Prints one JSON object. The reader scans raw bytes for the awaited id (no JSON parsing in
the hot loop), so the driver stays faster than what it measures.
"""
import json
import os
import subprocess
import sys
import threading
import time


def spawn(cmd):
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, bufsize=1 << 20)


def line(i, method, params):
    message = {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def increment(i):
    return line(i, "dispatch", {"store": "counter", "action": {"type": "increment"}})


def marks(i):
    return (b'"id":%d,' % i, b'"id":%d}' % i, b'"id": %d,' % i, b'"id": %d}' % i)


def await_id(fd, i, tail=b""):
    """Reads until the bytes of a response with id `i` went by; returns lines read."""
    wanted = marks(i)
    lines = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            raise SystemExit(f"the server closed stdout before id {i}")
        lines += chunk.count(b"\n")
        window = tail + chunk
        if any(m in window for m in wanted):
            return lines
        tail = chunk[-64:]


def pipelined(cmd, payload, last, setup=b"", setup_id=None):
    p = spawn(cmd)
    fd = p.stdout.fileno()
    if setup:
        p.stdin.write(setup)
        p.stdin.flush()
        await_id(fd, setup_id)
    t0 = time.perf_counter()
    writer = threading.Thread(target=lambda: (p.stdin.write(payload), p.stdin.flush()))
    writer.start()
    lines = await_id(fd, last)
    seconds = time.perf_counter() - t0
    writer.join()
    p.stdin.close()
    p.wait(timeout=60)
    return seconds, lines


def throughput(n, cmd):
    payload = b"".join(increment(i) for i in range(1, n + 1))
    seconds, lines = pipelined(cmd, payload, n)
    return {"mode": "throughput", "n": n, "seconds": seconds, "per_second": n / seconds,
            "lines_out": lines}


def latency(k, cmd):
    p = spawn(cmd)
    fd = p.stdout.fileno()
    samples = []
    for i in range(1, k + 1):
        t0 = time.perf_counter()
        p.stdin.write(increment(i))
        p.stdin.flush()
        await_id(fd, i)
        samples.append(time.perf_counter() - t0)
    p.stdin.close()
    p.wait(timeout=60)
    samples.sort()

    def pick(q):
        return samples[min(len(samples) - 1, int(q * len(samples)))] * 1e6

    return {"mode": "latency", "k": k, "p50_us": pick(0.5), "p99_us": pick(0.99),
            "max_us": samples[-1] * 1e6}


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        for entry in status:
            if entry.startswith("VmRSS"):
                return int(entry.split()[1])
    return None


def startup(runs, cmd):
    times, memory = [], []
    request = line(1, "initialize", {"client": {"name": "drive", "version": "1"}})
    for _ in range(runs):
        t0 = time.perf_counter()
        p = spawn(cmd)
        p.stdin.write(request)
        p.stdin.flush()
        await_id(p.stdout.fileno(), 1)
        times.append(time.perf_counter() - t0)
        memory.append(rss_kb(p.pid))
        p.stdin.close()
        p.wait(timeout=60)
    times.sort()
    return {"mode": "startup", "runs": runs, "median_ms": times[len(times) // 2] * 1e3,
            "max_ms": times[-1] * 1e3, "idle_rss_mb": max(memory) / 1024}


def bigstate(m, k, cmd):
    notes = [{"id": f"n{i}", "text": f"note {i}", "createdAt": "2026-01-01T00:00:00Z",
              "updatedAt": "2026-01-01T00:00:00Z", "syncStatus": "synchronized"}
             for i in range(m)]
    setup = line(1, "store/open", {"feature": "notes", "store": "bench", "state": {"notes": notes}})
    payload = b"".join(
        line(i, "dispatch", {"store": "bench",
                             "action": {"type": "edit", "id": f"n{(i * 7919) % m}", "text": f"edit {i}"}})
        for i in range(2, k + 2))
    seconds, _ = pipelined(cmd, payload, k + 1, setup=setup, setup_id=1)
    return {"mode": "bigstate", "m": m, "k": k, "seconds": seconds, "per_action_us": seconds / k * 1e6}


def main(argv):
    separator = argv.index("--")
    args, cmd = argv[1:separator], argv[separator + 1:]
    modes = {"throughput": throughput, "latency": latency, "startup": startup}
    if args[0] in modes:
        result = modes[args[0]](int(args[1]), cmd)
    elif args[0] == "bigstate":
        result = bigstate(int(args[1]), int(args[2]), cmd)
    else:
        raise SystemExit(__doc__)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv)
