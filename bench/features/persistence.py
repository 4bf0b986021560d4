#!/usr/bin/env python3
"""Cost of persistence for the reference app's notes, side by side in one run.

  persistence.py BIN [M] [K]

Opens a notes store of M notes (default 100,000) with and without `persist: true` in a
temporary --state-dir, pipelines K edits of one note each (default 2,000), and reports
microseconds per edit, the ratio persisted/in-memory, the time of the final flush at
shutdown, and the size of the database. Speaks only the protocol.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def run(binary, m, k, persist):
    state_dir = tempfile.mkdtemp(prefix="stateserver-bench-")
    try:
        server = subprocess.Popen([binary, "--state-dir", state_dir], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        notes = [{"id": f"n{i}", "text": f"note {i}", "createdAt": "2026-01-01T00:00:00Z",
                  "updatedAt": "2026-01-01T00:00:00Z", "syncStatus": "synchronized"}
                 for i in range(m)]

        def send(message):
            server.stdin.write((json.dumps(message, separators=(",", ":")) + "\n").encode())

        def wait_for(request_id):
            while json.loads(server.stdout.readline()).get("id") != request_id:
                pass

        send({"jsonrpc": "2.0", "id": 1, "method": "store/open",
              "params": {"feature": "notes", "store": "bench", "state": {"notes": notes},
                         "persist": persist}})
        server.stdin.flush()
        wait_for(1)
        started = time.perf_counter()
        for i in range(2, k + 2):
            send({"jsonrpc": "2.0", "id": i, "method": "dispatch",
                  "params": {"store": "bench",
                             "action": {"type": "edit", "id": f"n{(i * 7919) % m}",
                                        "text": f"edit {i}"}}})
        server.stdin.flush()
        wait_for(k + 1)
        per_action = (time.perf_counter() - started) / k * 1e6
        closing = time.perf_counter()
        server.stdin.close()
        server.wait(timeout=120)
        shutdown = time.perf_counter() - closing
        database = os.path.join(state_dir, "stateserver.sqlite")
        size = os.path.getsize(database) if os.path.exists(database) else 0
        return {"per_action_us": per_action, "shutdown_s": shutdown, "database_bytes": size}
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    binary = argv[1]
    m = int(argv[2]) if len(argv) > 2 else 100_000
    k = int(argv[3]) if len(argv) > 3 else 2_000
    memory = run(binary, m, k, persist=False)
    disk = run(binary, m, k, persist=True)
    print(f"notes edit, {m:,} notes, in memory:  {memory['per_action_us']:8.1f} us/action")
    print(f"notes edit, {m:,} notes, persisted:  {disk['per_action_us']:8.1f} us/action")
    print(f"ratio persisted / in memory:        {disk['per_action_us'] / memory['per_action_us']:8.1f}x")
    print(f"shutdown incl. final flush:         {disk['shutdown_s'] * 1000:8.0f} ms "
          f"(in memory: {memory['shutdown_s'] * 1000:.0f} ms)")
    print(f"database size:                      {disk['database_bytes'] / 1e6:8.1f} MB")


if __name__ == "__main__":
    main(sys.argv)
