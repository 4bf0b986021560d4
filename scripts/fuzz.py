#!/usr/bin/env python3
"""A long, seeded fuzz of the release binary: `make fuzz N=10000000 SEED=7`.

It streams the generator of tests/fuzz_generator.py (mutated JSON-RPC lines, actions with
wrong types at every depth, batches, truncations, invalid UTF-8, huge numbers, deep nesting) into
one server, each fuzz line followed by a probe request with a known id, CHUNK lines per write.
After every line it checks, with the oracle of tests/test_robustness_oracle.py, that exactly the
replies JSON-RPC requires arrived before the probe's answer (ids echoed exactly, known codes),
so a crash, a hang or an unanswered request stops the run at the line that caused it. Every
50,000 lines it closes the stores the fuzz opened, so a long run measures the protocol, not an
ever longer store list. At the end input closes and the server must exit 0 with every deferred
reply written.

The last line on stdout is a JSON summary: seed, lines, seconds, lines per second, outcome.
"""
import argparse
import json
import os
import queue
import random
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from fuzz_generator import Fuzzer  # noqa: E402
from test_robustness_oracle import Ledger  # noqa: E402

TIMEOUT = 60  # seconds any one probe may take on a loaded machine
DEFAULT_STORES = {"counter", "users", "cart", "backend", "notes", "profile", "navigation"}


class Server:
    """The binary on pipes; a thread turns its stdout into parsed messages."""

    def __init__(self, binary):
        self.process = subprocess.Popen(
            [binary, "--ephemeral", "--drain-timeout", "1", "--log-level", "error"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.messages = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.process.stdout:
            try:
                self.messages.put(json.loads(raw))
            except ValueError:
                self.messages.put({"unparsable": raw[:300].decode("latin-1")})
        self.messages.put(None)

    def send(self, data):
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def next_message(self):
        message = self.messages.get(timeout=TIMEOUT)
        if message is None:
            raise RuntimeError(f"the server ended its output (exit {self.process.poll()})")
        if "unparsable" in message:
            raise RuntimeError(f"an output line that is not JSON: {message['unparsable']!r}")
        return message


def is_response(message):
    return isinstance(message, list) or (isinstance(message, dict) and "method" not in message)


def probe(tag):
    return json.dumps({"jsonrpc": "2.0", "id": tag, "method": "$/cancelRequest",
                       "params": {"id": "nothing-pending"}}).encode() + b"\n"


def until(server, tag):
    """The responses before the answer to request `tag`."""
    responses = []
    while True:
        message = server.next_message()
        if isinstance(message, dict) and message.get("id") == tag and "method" not in message:
            return responses
        if is_response(message):
            responses.append(message)


def close_fuzz_stores(server, ledger, index):
    """Closes every store but the defaults, so the store list stays short."""
    tag = f"housekeeping-list-{index}"
    server.send(json.dumps({"jsonrpc": "2.0", "id": tag, "method": "store/list"}).encode() + b"\n")
    stray = []
    while True:
        message = server.next_message()
        if isinstance(message, dict) and message.get("id") == tag:
            break
        if is_response(message):
            stray.append(message)
    ledger._settle(stray, f"housekeeping before line {index}")
    stores = [s["store"] for s in message.get("result", {}).get("stores", [])]
    closes = [{"jsonrpc": "2.0", "id": f"housekeeping-close-{index}-{n}", "method": "store/close",
               "params": {"store": store}}
              for n, store in enumerate(stores) if store not in DEFAULT_STORES]
    if closes:
        server.send(json.dumps(closes).encode() + b"\n")
        done = f"housekeeping-done-{index}"
        server.send(probe(done))
        responses = until(server, done)
        ledger._settle([r for r in responses if not (isinstance(r, list) and r and str(
            r[0].get("id", "")).startswith("housekeeping-close"))], "housekeeping")


def run(binary, lines, seed, chunk, report_every):
    fuzzer = Fuzzer(random.Random(seed))
    server = Server(binary)
    ledger = Ledger()
    sent = 0
    started = time.monotonic()
    next_report = report_every
    while sent < lines:
        cases = []
        while len(cases) < min(chunk, lines - sent):
            case = fuzzer.line()
            if case is not None:
                cases.append(case)
        payload = bytearray()
        for offset, (data, _) in enumerate(cases):
            payload += data + b"\n" + probe(f"probe-{sent + offset}")
        writer = threading.Thread(target=server.send, args=(bytes(payload),), daemon=True)
        writer.start()
        for offset, (data, expectation) in enumerate(cases):
            index = sent + offset
            try:
                responses = until(server, f"probe-{index}")
            except (queue.Empty, RuntimeError) as error:
                raise SystemExit(summary(seed, index, started, f"no answer after line {index} "
                                         f"{data[:300]!r}: {error!r}"))
            ledger.expect(f"line {index} {data[:300]!r}", expectation)
            try:
                ledger.segment(responses)
            except AssertionError as error:
                raise SystemExit(summary(seed, index, started, str(error)[:2000]))
        writer.join()
        sent += len(cases)
        if sent >= next_report:
            elapsed = time.monotonic() - started
            print(f"{sent} lines, {elapsed:.0f} s, {sent / elapsed:.0f} lines/s",
                  file=sys.stderr, flush=True)
            next_report += report_every
        if sent % 50_000 < chunk:
            close_fuzz_stores(server, ledger, sent)
    server.process.stdin.close()
    rest = []
    while True:
        try:
            message = server.messages.get(timeout=TIMEOUT)
        except queue.Empty:
            raise SystemExit(summary(seed, sent, started, "output did not end after input"))
        if message is None:
            break
        if is_response(message):
            rest.append(message)
    code = server.process.wait(timeout=TIMEOUT)
    try:
        ledger.finish(rest)
    except AssertionError as error:
        return summary(seed, sent, started, str(error)[:2000])
    if code != 0:
        return summary(seed, sent, started, f"exit status {code}")
    return summary(seed, sent, started, None)


def summary(seed, lines, started, failure):
    elapsed = time.monotonic() - started
    result = {"seed": seed, "lines": lines, "seconds": round(elapsed, 1),
              "linesPerSecond": round(lines / elapsed) if elapsed else None,
              "outcome": "ok" if failure is None else "failed", "failure": failure}
    print(json.dumps(result), flush=True)
    return 0 if failure is None else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=".build/release/stateserver")
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--chunk", type=int, default=200, help="fuzz lines per write")
    parser.add_argument("--report-every", type=int, default=100_000)
    args = parser.parse_args()
    sys.exit(run(args.bin, args.lines, args.seed, args.chunk, args.report_every))


if __name__ == "__main__":
    main()
