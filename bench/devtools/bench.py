#!/usr/bin/env python3
"""The core's throughput with devtools attached against alone, side by side.

Each round starts two cores with `--listen` at once, both with history on (the default): one
alone, one with `python -m stateserver.devtools --attach` polling it and a page reader (a
WebSocket client in a process of its own, as the browser would be) reading every update. Both
sides first take 10,000 increments/s for 10 s (paced, pipelined: the driver never waits for an
answer), then a pipelined burst of N increments, at the same moment, so both run under the
same machine load (these 2-core machines are shared). Printed: the paced phase's rate and the
lag of its last answer, each side's burst throughput, and the median of the rounds' ratios
(the target: at least 0.8).
"""
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sidebyside  # noqa: E402

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
RATE = 10_000
PACED_SECONDS = max(1.0, 10 * SCALE)
N = max(1000, int(100_000 * SCALE))
ROUNDS = 5
TARGET = 0.8


def line(i, method, params):
    return (json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params},
                       separators=(",", ":")) + "\n").encode()


def increments(first, count):
    return b"".join(line(i, "dispatch", {"store": "counter", "action": {"type": "increment"}})
                    for i in range(first, first + count))


class Reader:
    """Reads the core's stdout in a thread; `wait(i)` returns once the answer to id i came
    (answers come in order of the requests: they are all dispatches to one store)."""

    PREFIX = b'{"jsonrpc":"2.0","id":'

    def __init__(self, fd):
        self.fd = fd
        self.cond = threading.Condition()
        self.last = -1
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        rest = b""
        while True:
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                with self.cond:
                    self.last = float("inf")
                    self.cond.notify_all()
                return
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            last = None
            for raw in lines:
                if raw.startswith(self.PREFIX):
                    last = raw[len(self.PREFIX):raw.index(b",", len(self.PREFIX))]
            if last is not None:
                with self.cond:
                    self.last = int(last)
                    self.cond.notify_all()

    def wait(self, i):
        with self.cond:
            if not self.cond.wait_for(lambda: self.last >= i, timeout=600):
                raise SystemExit(f"no answer to id {i}")


def side(binary, directory, kind):
    path = os.path.join(directory, f"{kind}.sock")
    core = subprocess.Popen([binary, "--ephemeral", "--listen", path], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=1 << 20)
    reader = Reader(core.stdout.fileno())
    helpers = []
    core.stdin.write(line(0, "store/list", {}))
    core.stdin.flush()
    reader.wait(0)
    if kind == "devtools":
        devtools = subprocess.Popen([sys.executable, "-m", "stateserver.devtools", "--attach",
                                     path, "--stateserver", binary], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
        url = devtools.stdout.readline().strip()
        page = subprocess.Popen([sys.executable, __file__, "--page", url], stdout=subprocess.PIPE,
                                text=True)
        if page.stdout.readline().strip() != "reading":
            raise SystemExit("the page reader did not connect")
        helpers = [page, devtools]
    print("ready", flush=True)
    sys.stdin.readline()
    # 10,000 actions/s for PACED_SECONDS, in 10 ms slices.
    total = int(RATE * PACED_SECONDS)
    t0 = time.perf_counter()
    sent = 0
    while sent < total:
        due = min(total, int((time.perf_counter() - t0) * RATE) + 100)
        if due > sent:
            core.stdin.write(increments(sent + 1, due - sent))
            core.stdin.flush()
            sent = due
        time.sleep(0.01)
    reader.wait(total)
    paced = time.perf_counter() - t0
    lag = paced - PACED_SECONDS
    # The pipelined burst.
    payload = increments(total + 1, N)
    t1 = time.perf_counter()
    writer = threading.Thread(target=lambda: (core.stdin.write(payload), core.stdin.flush()))
    writer.start()
    reader.wait(total + N)
    burst = time.perf_counter() - t1
    writer.join()
    core.stdin.close()
    core.wait(timeout=120)
    messages = 0
    for helper in helpers:
        if helper.poll() is None:
            helper.terminate()
        out = helper.communicate(timeout=120)[0] or ""
        if helper is helpers[0] and out.strip():
            messages = int(out.strip().splitlines()[-1])
    print(json.dumps({"paced_per_second": total / paced, "paced_lag_s": lag,
                      "per_second": N / burst, "page_messages": messages}), flush=True)


def page(url):
    """The page's share of the work: reads every WebSocket message until told to stop."""
    import signal

    import aiohttp

    async def read():
        count = 0
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(url.replace("http://", "ws://") + "ws") as socket:
                print("reading", flush=True)
                while not stop.is_set():
                    try:
                        message = await asyncio.wait_for(socket.receive(), 0.5)
                    except asyncio.TimeoutError:
                        continue
                    if message.type != aiohttp.WSMsgType.TEXT:
                        break
                    json.loads(message.data)
                    count += 1
        print(count, flush=True)

    asyncio.run(read())


def round_side_by_side(binary, directory, devtools_first):
    """[alone, devtools] figures, the two sides run at once (bench/sidebyside.py)."""
    kinds = ("devtools", "alone") if devtools_first else ("alone", "devtools")
    figures = sidebyside.round_side_by_side(__file__, binary, directory, kinds, timeout=300)
    return [figures["alone"], figures["devtools"]]


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--page":
        page(sys.argv[2])
        return
    if len(sys.argv) == 5 and sys.argv[2] == "--side":
        side(sys.argv[1], sys.argv[4], sys.argv[3])
        return
    binary = sys.argv[1]
    rounds = []
    with tempfile.TemporaryDirectory() as directory:
        os.chmod(directory, 0o700)
        for index in range(ROUNDS):
            rounds.append(round_side_by_side(binary, directory, devtools_first=index % 2 == 1))
    ratios = [d["per_second"] / a["per_second"] for a, d in rounds]
    ratio = statistics.median(ratios)
    print(f"{RATE:,} increments/s for {PACED_SECONDS:g} s, then {N:,} pipelined; {ROUNDS} rounds,"
          " both sides at once")
    for name, index in (("alone", 0), ("devtools attached, page open", 1)):
        figures = [r[index] for r in rounds]
        print(f"  {name:<30} paced {statistics.median(f['paced_per_second'] for f in figures):>8,.0f}/s"
              f" (last answer {statistics.median(f['paced_lag_s'] for f in figures) * 1000:,.0f} ms"
              f" after the last send)   burst {statistics.median(f['per_second'] for f in figures):>9,.0f}/s")
    print(f"  page messages per round (median)  {statistics.median(r[1]['page_messages'] for r in rounds):,.0f}")
    print("  rounds' ratios                    " + " ".join(f"{r:.2f}" for r in ratios))
    ok = ratio >= TARGET
    print(f"  burst throughput ratio (median)   {ratio:.2f}  (target >= {TARGET}) "
          f"{'ok' if ok else 'MISSED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
