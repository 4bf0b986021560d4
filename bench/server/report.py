#!/usr/bin/env python3
"""Runs drive.py against stateserver and its two anchors and prints figures and ratios."""
import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCALE = float(os.environ.get("BENCH_SCALE", "1"))


def drive(*args):
    out = subprocess.run([sys.executable, os.path.join(HERE, "drive.py"), *map(str, args)],
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"drive.py {' '.join(map(str, args))} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def best(runs, *args):
    """The best of `runs` (shared machines only ever slow a run down)."""
    results = [drive(*args) for _ in range(runs)]
    key = {"throughput": lambda r: -r["per_second"], "latency": lambda r: r["p50_us"],
           "bigstate": lambda r: r["per_action_us"], "startup": lambda r: r["median_ms"]}[args[0]]
    return min(results, key=key)


def c_latency(binary, k, cmd):
    """latency.c (a C driver, one request at a time): p50/p99 and the child's CPU/request."""
    out = subprocess.run([binary, str(k), "--", *cmd], capture_output=True, text=True,
                         timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"latency {' '.join(cmd)} failed:\n{out.stderr}")
    return json.loads(out.stdout)


@contextlib.contextmanager
def awake_cpus():
    """A busy loop at nice 19 for the duration: the CPUs never go idle, and any other process
    that becomes runnable preempts it at once."""
    spinner = subprocess.Popen([sys.executable, "-c", "import os\nos.nice(19)\nwhile True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def latency_pairs(binary, k, echo, server, rounds):
    """`rounds` pairs of latency.c runs, the echo's then the server's."""
    return [(c_latency(binary, k, echo), c_latency(binary, k, server)) for _ in range(rounds)]


def median_figures(pairs, side):
    """Each figure's median over one side (0: echo, 1: server) of the pairs."""
    keys = ("p50_us", "p99_us", "cpu_us_per_request")
    return {key: statistics.median(pair[side][key] for pair in pairs) for key in keys}


def median_ratio(pairs, key):
    """The median over the pairs of the server's figure against the echo's: a pair's two runs
    follow each other, so a change of the machine's state between pairs cancels out."""
    return statistics.median(pair[1][key] / pair[0][key] for pair in pairs)


def n(x):
    return max(1, int(x * SCALE))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--echo", required=True)
    parser.add_argument("--peer", required=True)
    parser.add_argument("--latency", required=True, help="latency.c, built")
    options = parser.parse_args()
    server = [options.server, "--ephemeral"]
    echo = [options.echo]
    peer = [sys.executable, options.peer]

    rows, checks = [], []
    total = n(200_000)
    # Five rounds of echo, server and peer, in reverse order every other round; the figures
    # are each one's median, the ratios the medians of the ratios taken within each round. The
    # host's speed moves by 15% or more within minutes: the best of each one's runs let one
    # side catch a quick minute the other did not (13x to 17x the peer in runs of one build),
    # while the runs of one round follow each other, so such a change cancels out of its ratio.
    names = ("echo", "server", "peer")
    commands = {"echo": (total, echo), "server": (total, server), "peer": (n(50_000), peer)}
    rounds = []
    for round_number in range(5):
        order = names if round_number % 2 == 0 else tuple(reversed(names))
        result = {}
        for name in order:
            increments, command = commands[name]
            result[name] = drive("throughput", increments, "--", *command)["per_second"]
        rounds.append(result)
    t_echo, t_server, t_peer = (statistics.median(r[name] for r in rounds) for name in names)
    rows.append(("pipelined counter increments/s (median of 5 rounds)", f"{t_server:,.0f}",
                 f"echo {t_echo:,.0f}; python peer {t_peer:,.0f}"))
    echo_ratio = statistics.median(r["server"] / r["echo"] for r in rounds)
    peer_ratio = statistics.median(r["server"] / r["peer"] for r in rounds)
    peer_ratios = sorted(r["server"] / r["peer"] for r in rounds)
    rows.append(("  server / peer in each round", " ".join(f"{x:.1f}" for x in peer_ratios), ""))
    checks.append(("throughput vs C jansson echo", echo_ratio, ">= 1.3x", echo_ratio >= 1.3))
    checks.append(("throughput vs Python jsonpatch peer", peer_ratio, ">= 15x", peer_ratio >= 15))

    # The round trip in two states of the CPUs, echo and server alternating in pairs, each
    # ratio the median of the pairs' ratios. Awake (the targets): a busy loop at the lowest
    # priority keeps this virtual machine's CPUs out of idle and yields to any process that
    # wants them, so a woken process runs at once. Left alone: nothing else runs, and a request
    # pays an idle CPU's wake-up (60 µs and more here) or not, as the host decides (its vCPUs
    # stay awake for seconds after load); the regime can change between the two runs of a
    # pair, so these are reported, not held to the targets.
    with awake_cpus():
        awake = latency_pairs(options.latency, n(3_000), echo, server, rounds=5)
    idle = latency_pairs(options.latency, n(3_000), echo, server, rounds=5)
    for name, pairs, target in (("CPUs awake", awake, True), ("CPUs left alone", idle, False)):
        e, s = median_figures(pairs, 0), median_figures(pairs, 1)
        rows.append((f"round trip p50 / p99 (us), latency.c, {name}",
                     f"{s['p50_us']:.1f} / {s['p99_us']:.1f}",
                     f"echo {e['p50_us']:.1f} / {e['p99_us']:.1f}"))
        rows.append((f"CPU per request (us), latency.c, {name}",
                     f"{s['cpu_us_per_request']:.1f}", f"echo {e['cpu_us_per_request']:.1f}"))
        # Issue 27's targets for the plain pipeline: p50 <= 1.2x and CPU <= 1.3x the echo.
        for key, label, bound in (("p50_us", "latency p50", 1.2), ("p99_us", "latency p99", 3),
                                  ("cpu_us_per_request", "CPU per request", 1.3)):
            ratio = median_ratio(pairs, key)
            if target:
                checks.append((f"{label} vs echo, {name}", ratio, f"<= {bound}x", ratio <= bound))
            else:
                checks.append((f"{label} vs echo, {name}", ratio, "report", True))

    start = best(1, "startup", 21, "--", *server)
    rows.append(("start to initialize response (ms, median of 21)", f"{start['median_ms']:.1f}",
                 f"max {start['max_ms']:.1f}"))
    rows.append(("idle resident memory (MB)", f"{start['idle_rss_mb']:.1f}", ""))
    checks.append(("startup ms", start["median_ms"], "<= 4 ms", start["median_ms"] <= 4))
    checks.append(("idle RSS MB", start["idle_rss_mb"], "<= 10 MB", start["idle_rss_mb"] <= 10))

    edits = n(5_000)
    small = best(3, "bigstate", 1_000, edits, "--", *server)
    large = best(3, "bigstate", 100_000, edits, "--", *server)
    rows.append(("notes edit, 1,000 notes (us/action)", f"{small['per_action_us']:.1f}", ""))
    rows.append(("notes edit, 100,000 notes (us/action)", f"{large['per_action_us']:.1f}", ""))
    big_ratio = large["per_action_us"] / small["per_action_us"]
    checks.append(("100,000 vs 1,000 notes per action", big_ratio, "<= 10x", big_ratio <= 10))
    peer_big = best(1, "bigstate", 1_000, n(500), "--", *peer)
    rows.append(("python peer, 1,000 notes (us/action)", f"{peer_big['per_action_us']:.1f}", ""))

    width = max(len(r[0]) for r in rows)
    print("stateserver server benchmark (one run, same driver for every process)")
    for name, value, note in rows:
        print(f"  {name:<{width}}  {value:>14}  {note}")
    print("ratios and targets")
    failed = False
    for name, value, target, ok in checks:
        mark = "ok" if ok else "MISSED"
        failed |= not ok
        print(f"  {name:<{width}}  {value:>14.2f}  {target} {mark if target != 'report' else ''}")
    if failed:
        print("some targets were missed (see above)")
        sys.exit(1)


if __name__ == "__main__":
    main()
