#!/usr/bin/env python3
"""Cost of durable persistence for the reference app's notes, side by side in one run.

  persistence.py BIN [M] [K] [ROUNDS]

Each round, in alternation: opens a notes store of M notes (default 100,000) with and without
`persist: true`, pipelines K edits of one note each (default 2,000; run.sh uses 10,000) and ends the input. Reports
the median over ROUNDS (default 5) of microseconds per edit and their ratio (every edit is
acknowledged only once committed), the final flush at shutdown as the server logs it (commit,
WAL checkpoint, close), and the round trip of one dispatch at a time on the persistent `notes`
store against an ephemeral notes store in the same server. Speaks only the protocol.
Targets (issue 9): ratio <= 1.3x, flush <= 50 ms.
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time


class Server:
    def __init__(self, binary, state_dir):
        self.process = subprocess.Popen(
            [binary, "--state-dir", state_dir, "--log-level", "info", "--latency", "0"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stderr = b""
        self.reader = threading.Thread(target=self._read_stderr, daemon=True)
        self.reader.start()

    def _read_stderr(self):
        self.stderr = self.process.stderr.read()

    def send(self, message):
        self.process.stdin.write((json.dumps(message, separators=(",", ":")) + "\n").encode())

    def write_all(self, data):
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def wait_for(self, request_id, flush=True):
        if flush:
            self.process.stdin.flush()
        while True:
            message = json.loads(self.process.stdout.readline())
            if message.get("id") == request_id:
                assert "result" in message, message
                return message

    def cpu_seconds(self):
        """User plus system CPU time of the server so far: on a loaded machine it varies far
        less than the wall clock, so the ratio of CPU per edit is reported beside it."""
        with open(f"/proc/{self.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self):
        started = time.perf_counter()
        self.process.stdin.close()
        self.process.stdout.read()
        self.process.wait(timeout=120)
        self.reader.join(timeout=120)
        return time.perf_counter() - started


def edits(binary, m, k, persist):
    state_dir = tempfile.mkdtemp(prefix="stateserver-bench-")
    try:
        server = Server(binary, state_dir)
        notes = [{"id": f"n{i}", "text": f"note {i}", "createdAt": "2026-01-01T00:00:00Z",
                  "updatedAt": "2026-01-01T00:00:00Z", "syncStatus": "synchronized"}
                 for i in range(m)]
        server.send({"jsonrpc": "2.0", "id": 1, "method": "store/open",
                     "params": {"feature": "notes", "store": "bench", "state": {"notes": notes},
                                "persist": persist}})
        server.wait_for(1)
        lines = b"".join(
            (json.dumps({"jsonrpc": "2.0", "id": i, "method": "dispatch",
                         "params": {"store": "bench",
                                    "action": {"type": "edit", "id": f"n{(i * 7919) % m}",
                                               "text": f"edit {i}"}}},
                        separators=(",", ":")) + "\n").encode()
            for i in range(2, k + 2))
        cpu_started = server.cpu_seconds()
        started = time.perf_counter()
        # Written from a thread while this one reads: a client that writes everything before
        # reading would stall once the server's output queue is full (it stops reading).
        writer = threading.Thread(target=server.write_all, args=(lines,))
        writer.start()
        server.wait_for(k + 1, flush=False)
        writer.join()
        per_action = (time.perf_counter() - started) / k * 1e6
        cpu_per_action = (server.cpu_seconds() - cpu_started) / k * 1e6
        shutdown = server.close()
        flushed = re.search(rb"checkpointed and closed in ([0-9.]+) ms", server.stderr)
        transactions = re.search(rb"\(([0-9]+) transactions in this run\)", server.stderr)
        database = os.path.join(state_dir, "stateserver.sqlite")
        return {"per_action_us": per_action, "cpu_per_action_us": cpu_per_action,
                "shutdown_ms": shutdown * 1000,
                "flush_ms": float(flushed.group(1)) if flushed else None,
                "transactions": int(transactions.group(1)) if transactions else None,
                "database_bytes": os.path.getsize(database) if os.path.exists(database) else 0}
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)


def round_trips(binary, n=400):
    """One dispatch at a time, alternating the persistent `notes` and an ephemeral notes
    store in one server: microseconds per round trip, median of each."""
    state_dir = tempfile.mkdtemp(prefix="stateserver-bench-")
    try:
        server = Server(binary, state_dir)
        server.send({"jsonrpc": "2.0", "id": "open", "method": "store/open",
                     "params": {"feature": "notes", "store": "scratch"}})
        server.wait_for("open")
        times = {"notes": [], "scratch": []}
        for i in range(n):
            for store in ("notes", "scratch"):
                started = time.perf_counter()
                server.send({"jsonrpc": "2.0", "id": i, "method": "dispatch",
                             "params": {"store": store,
                                        "action": {"type": "add", "text": f"note {i}"}}})
                server.wait_for(i)
                times[store].append((time.perf_counter() - started) * 1e6)
        server.close()
        return {store: statistics.median(values) for store, values in times.items()}
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    binary = argv[1]
    m = int(argv[2]) if len(argv) > 2 else 100_000
    k = int(argv[3]) if len(argv) > 3 else 2_000
    rounds = int(argv[4]) if len(argv) > 4 else 5
    memory, disk = [], []
    for _ in range(rounds):
        memory.append(edits(binary, m, k, persist=False))
        disk.append(edits(binary, m, k, persist=True))
    ratios = sorted(d["per_action_us"] / m_["per_action_us"] for d, m_ in zip(disk, memory))
    median = lambda runs, key: statistics.median(r[key] for r in runs)  # noqa: E731
    flushes = [d["flush_ms"] for d in disk if d["flush_ms"] is not None]
    trips = round_trips(binary)
    ratio = statistics.median(ratios)
    cpu_ratios = sorted(d["cpu_per_action_us"] / m_["cpu_per_action_us"]
                        for d, m_ in zip(disk, memory))
    flush = statistics.median(flushes) if flushes else float("nan")
    print(f"notes edit, {m:,} notes, in memory:  {median(memory, 'per_action_us'):8.1f} us/action")
    print(f"notes edit, {m:,} notes, persisted:  {median(disk, 'per_action_us'):8.1f} us/action "
          "(acknowledged after commit)")
    print(f"ratio persisted / in memory:        {ratio:8.2f}x "
          f"[{ratios[0]:.2f}x to {ratios[-1]:.2f}x over {rounds} rounds] (target <= 1.3x)")
    print(f"CPU per edit, in memory / persisted: {median(memory, 'cpu_per_action_us'):6.1f} / "
          f"{median(disk, 'cpu_per_action_us'):.1f} us, ratio {statistics.median(cpu_ratios):.2f}x "
          f"[{cpu_ratios[0]:.2f}x to {cpu_ratios[-1]:.2f}x] (server process, user + system)")
    print(f"final flush at shutdown:            {flush:8.1f} ms (commit, checkpoint, close; "
          "target <= 50 ms)")
    print(f"whole shutdown, persisted:          {median(disk, 'shutdown_ms'):8.0f} ms "
          f"(in memory: {median(memory, 'shutdown_ms'):.0f} ms)")
    commits = [d["transactions"] for d in disk if d["transactions"]]
    if commits:
        print(f"group commit:                       {k / statistics.median(commits):8.1f} edits "
              "per transaction (median)")
    print(f"database size:                      {median(disk, 'database_bytes') / 1e6:8.1f} MB")
    print(f"dispatch round trip, persistent:    {trips['notes']:8.1f} us "
          f"(ephemeral: {trips['scratch']:.1f} us, {trips['notes'] / trips['scratch']:.2f}x)")
    return 0 if ratio <= 1.3 and flush <= 50 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
