#!/usr/bin/env python3
"""A soak: mixed load on one server for a while, then quiet, and its memory must come back.

Each round opens stores of several features, subscribes to paths in them, sends a few thousand
actions in one write (effects with delays, `wait: "settled"` requests, cancellations), and
every third round stops reading stdout for a while during a burst (a slow reader: the server
must coalesce, not queue). Then it closes the stores it opened. Resident memory (VmRSS) is
sampled once the warm-up round is over and the server has been quiet for `--quiet` seconds
(the baseline), after every round, and at the end when all is quiet again. The server gives
the allocator's free memory back after a second without work (IdleTrim.swift), so both
quiet samples are taken after it.

Prints one JSON line: rounds, requests, baselineMB, peakMB, finalMB, deltaMB, returned (final
within `--slack-mb` of the baseline), unanswered (requests without a response; must be 0), and
with `--heap` (needs gdb) the bytes malloc holds in use and in its arenas at both samples
(`mallinfo2`), which tell a leak (in use grows) from memory the allocator keeps (arenas grow).
Usage: soak.py BIN [--seconds 180] [--rounds N] [--slack-mb 4] [--quiet 2] [--heap] [--verbose]
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import threading
import time

TIMEOUT = 60


class Server:
    def __init__(self, binary):
        self.process = subprocess.Popen(
            [binary, "--ephemeral", "--latency", "2", "--log-level", "error"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.reading = threading.Event()
        self.reading.set()
        self.answered = set()
        self.lock = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.process.stdout:
            self.reading.wait()
            message = json.loads(raw)
            replies = message if isinstance(message, list) else [message]
            with self.lock:
                for reply in replies:
                    if isinstance(reply, dict) and "id" in reply and "method" not in reply:
                        self.answered.add(reply["id"])
                self.lock.notify_all()

    def send(self, messages):
        data = "".join(json.dumps(m) + "\n" for m in messages).encode()
        writer = threading.Thread(target=self._write, args=(data,), daemon=True)
        writer.start()
        return writer

    def _write(self, data):
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def wait_for(self, ids):
        deadline = time.monotonic() + TIMEOUT
        with self.lock:
            while not ids <= self.answered:
                left = deadline - time.monotonic()
                if left <= 0:
                    return ids - self.answered
                self.lock.wait(left)
        return set()

    def rss_mb(self, field="VmRSS"):
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def rss_parts(self):
        """Resident memory by kind: anonymous (heaps, stacks) and file-backed (the binary's
        pages, touched once as code runs for the first time)."""
        return {"anonMB": round(self.rss_mb("RssAnon"), 1),
                "fileMB": round(self.rss_mb("RssFile"), 1)}


def heap(pid):
    """malloc's own figures (glibc `mallinfo2`, every arena), read through gdb: bytes in use
    and bytes the arenas span. Nil without gdb or when it cannot attach."""
    if not shutil.which("gdb"):
        return None
    out = subprocess.run(["gdb", "-p", str(pid), "-batch", "-q", "-ex", "p mallinfo2()"],
                         capture_output=True, text=True, timeout=TIMEOUT).stdout
    fields = dict(re.findall(r"(\w+) = (\d+)", out))
    if "uordblks" not in fields:
        return None
    return {"inUseMB": round(int(fields["uordblks"]) / 2**20, 2),
            "arenasMB": round(int(fields["arena"]) / 2**20, 2)}


def request(rid, method, params=None):
    message = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method, params):
    return {"jsonrpc": "2.0", "method": method, "params": params}


class Soak:
    def __init__(self, server):
        self.server = server
        self.next_id = 0
        self.requests = 0
        self.unanswered = 0

    def rid(self):
        self.next_id += 1
        return self.next_id

    def exchange(self, messages):
        ids = {m["id"] for m in messages if "id" in m}
        self.requests += len(ids)
        self.server.send(messages).join(TIMEOUT)
        self.unanswered += len(self.server.wait_for(ids))

    def round(self, number, slow):
        stores = [f"soak-{number}-{kind}-{n}" for kind in ("counter", "cart", "notes")
                  for n in range(4)]
        self.exchange([request(self.rid(), "store/open",
                               {"feature": store.split("-")[2], "store": store})
                       for store in stores])
        self.exchange(
            [request(self.rid(), "state/subscribe", {"store": s, "path": "/items"})
             for s in stores if "-cart-" in s]
            + [request(self.rid(), "state/subscribe", {"store": s, "path": "/count"})
               for s in stores if "-counter-" in s])
        load = []
        for step in range(3000):
            store = stores[step % len(stores)]
            kind = store.split("-")[2]
            if kind == "counter":
                action = ({"type": "incrementLater", "afterMs": step % 7} if step % 5 == 0
                          else {"type": "increment"})
            elif kind == "cart":
                action = {"type": "add", "id": f"i{step % 40}", "name": "soak " * 8,
                          "price": step % 900}
            else:
                action = ({"type": "add", "text": f"note {step}"} if step % 3
                          else {"type": "sync"})
            if step % 10 == 0:
                load.append(request(self.rid(), "dispatch",
                                    {"store": store, "action": action, "wait": "settled"}))
            elif step % 10 == 1:
                rid = self.rid()
                load.append(request(rid, "dispatch",
                                    {"store": store, "action": action, "wait": "settled"}))
                load.append(notification("$/cancelRequest", {"id": rid}))
            else:
                load.append(notification("dispatch", {"store": store, "action": action}))
        load.append(request(self.rid(), "store/list"))
        if slow:
            # A reader that stops for a while during a burst: the server must coalesce.
            self.server.reading.clear()
            writer = self.server.send(
                [notification("dispatch", {"store": stores[0], "action": {"type": "increment"}})
                 for _ in range(20_000)])
            time.sleep(1.5)
            self.server.reading.set()
            writer.join(TIMEOUT)
        self.exchange(load)
        self.exchange([request(self.rid(), "store/close", {"store": s}) for s in stores])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--rounds", type=int, default=0, help="at least this many rounds")
    parser.add_argument("--slack-mb", type=float, default=4)
    parser.add_argument("--quiet", type=float, default=2,
                        help="seconds without load before each quiet sample")
    parser.add_argument("--heap", action="store_true", help="malloc's figures too (gdb)")
    parser.add_argument("--verbose", action="store_true", help="RSS after every round")
    args = parser.parse_args()
    server = Server(args.bin)
    soak = Soak(server)
    soak.round(0, slow=True)  # warm-up: every code path and buffer once
    soak.exchange([request(soak.rid(), "store/list")])
    time.sleep(args.quiet)
    baseline = server.rss_mb()
    baseline_parts = server.rss_parts()
    baseline_heap = heap(server.process.pid) if args.heap else None
    peak = baseline
    rounds = 1
    started = time.monotonic()
    while time.monotonic() - started < args.seconds or rounds <= args.rounds:
        soak.round(rounds, slow=rounds % 3 == 0)
        peak = max(peak, server.rss_mb())
        if args.verbose:
            print(f"round {rounds}: {server.rss_mb():.1f} MB", file=sys.stderr, flush=True)
        rounds += 1
    seconds = round(time.monotonic() - started)
    soak.exchange([request(soak.rid(), "store/list")])
    time.sleep(args.quiet)
    final = server.rss_mb()
    final_parts = server.rss_parts()
    final_heap = heap(server.process.pid) if args.heap else None
    server.process.stdin.close()
    code = server.process.wait(TIMEOUT)
    result = {"seconds": seconds, "rounds": rounds,
              "requests": soak.requests, "unanswered": soak.unanswered,
              "baselineMB": round(baseline, 1), "peakMB": round(peak, 1),
              "finalMB": round(final, 1), "deltaMB": round(final - baseline, 1),
              "baseline": baseline_parts, "final": final_parts, "slackMB": args.slack_mb,
              "returned": final <= baseline + args.slack_mb,
              "exit": code}
    if args.heap:
        result["heap"] = {"baseline": baseline_heap, "final": final_heap}
    print(json.dumps(result), flush=True)
    ok = result["returned"] and soak.unanswered == 0 and code == 0
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
