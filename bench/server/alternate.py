#!/usr/bin/env python3
"""Pipelined throughput of several commands in alternated rounds, with the CPU each takes.

  alternate.py [--rounds R] [--increments N] NAME=CMD ...
  alternate.py --round-trip LATENCY [--rounds R] [--requests K] NAME=CMD ...

Each round runs every command once on the same N pipelined `counter` increments (`drive.py`'s
requests), in the order given and in reverse order on every other round (so neither side is
always the one run right after the other); a command is split on spaces (`main=".build/
release/stateserver --ephemeral"`). Prints, per command, the medians over the rounds of:
increments per second, the command's own CPU per increment (user + system, from `wait4`, so
every thread it ran counts) and the driver's CPU per increment, each also as a ratio to the
first command. Then, per command after the first, the median and quartiles of the ratios
taken within each round: a change of the machine's speed between rounds cancels out of those,
so they tell a few per cent where the medians of the whole runs may not.

With `--round-trip`, each run is instead `LATENCY K -- CMD` (the shared C driver,
../shared/bench/latency.c, built: K increments, one at a time, each waiting for its answer),
and the columns are its p50 round trip and the command's CPU per request. That puts a change
of the round trip beside the build before it and the C echo in one run, alternated alike.

Why: these shared machines change speed by 15% or more within minutes, so a benchmark run by
itself cannot tell a 5% change. Alternating puts a burst of load on both sides alike, the
median drops the rounds it hit hardest, and the CPU per increment moves far less with the
load than the throughput does (a run slowed by a neighbour mostly waits).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import drive  # noqa: E402


def run(cmd, payload, last):
    """One pipelined run: increments per second, the command's and the driver's CPU (µs) per
    increment. The command's CPU covers its whole life, the drain at the end included."""
    process = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    fd = process.stdout.fileno()
    driver_before = os.times()
    t0 = time.perf_counter()
    writer = threading.Thread(target=lambda: (process.stdin.write(payload),
                                              process.stdin.close()))
    writer.start()
    drive.await_id(fd, last)
    seconds = time.perf_counter() - t0
    driver_after = os.times()
    writer.join()
    while os.read(fd, 1 << 20):
        pass
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} exited with status {status}")
    driver = (driver_after.user + driver_after.system
              - driver_before.user - driver_before.system)
    return (last / seconds, (usage.ru_utime + usage.ru_stime) / last * 1e6,
            driver / last * 1e6)


def round_trip(latency, cmd, requests):
    """One run of latency.c: p50 round trip (µs) and the command's CPU (µs) per request."""
    out = subprocess.run([latency, str(requests), "--", *cmd], capture_output=True, text=True,
                         timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"latency {' '.join(cmd)} failed:\n{out.stderr}")
    result = json.loads(out.stdout)
    return result["p50_us"], result["cpu_us_per_request"]


def main_round_trip(options, commands):
    results = {name: ([], []) for name in commands}
    order = list(commands.items())
    for index in range(options.rounds):
        for name, cmd in order if index % 2 == 0 else reversed(order):
            for column, value in zip(results[name],
                                     round_trip(options.round_trip, cmd, options.requests)):
                column.append(value)
    first = next(iter(commands))
    medians = {name: [statistics.median(column) for column in columns]
               for name, columns in results.items()}
    print(f"{options.rounds} alternated rounds of {options.requests:,} requests one at a time"
          " (medians; ratio to the first command)")
    print(f"  {'':12} {'p50 round trip (µs)':>22} {'CPU/request (µs)':>22}")
    for name, (p50, cpu) in medians.items():
        print(f"  {name:12} {p50:13.1f} ({p50 / medians[first][0]:.3f})"
              f" {cpu:13.1f} ({cpu / medians[first][1]:.3f})")
    others = list(results.items())[1:]
    if others:
        print("ratios to the first command within each round (median, quartiles):")
    for name, columns in others:
        p50 = spread([a / b for a, b in zip(columns[0], results[first][0])])
        cpu = spread([a / b for a, b in zip(columns[1], results[first][1])])
        print(f"  {name:12} p50 {p50}; CPU/request {cpu}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--increments", type=int, default=200_000)
    parser.add_argument("--round-trip", metavar="LATENCY",
                        help="latency.c, built: time round trips instead of a pipelined stream")
    parser.add_argument("--requests", type=int, default=5_000,
                        help="requests per round-trip run")
    parser.add_argument("commands", nargs="+", metavar="NAME=CMD")
    options = parser.parse_args()
    commands = {}
    for spec in options.commands:
        name, separator, cmd = spec.partition("=")
        if not separator or not cmd.split():
            parser.error(f"expected NAME=CMD, got {spec!r}")
        commands[name] = cmd.split()
    if options.round_trip:
        return main_round_trip(options, commands)
    n = options.increments
    payload = b"".join(drive.increment(i) for i in range(1, n + 1))
    results = {name: ([], [], []) for name in commands}
    order = list(commands.items())
    for index in range(options.rounds):
        for name, cmd in order if index % 2 == 0 else reversed(order):
            for column, value in zip(results[name], run(cmd, payload, n)):
                column.append(value)
    medians = {name: [statistics.median(column) for column in columns]
               for name, columns in results.items()}
    first = medians[next(iter(commands))]
    print(f"{options.rounds} alternated rounds of {n:,} pipelined increments (medians; ratio to"
          " the first command)")
    print(f"  {'':12} {'increments/s':>20} {'CPU/increment (µs)':>22} {'driver CPU (µs)':>20}")
    for name, (rate, cpu, driver) in medians.items():
        print(f"  {name:12} {rate:12,.0f} ({rate / first[0]:.3f}) {cpu:13.3f} ({cpu / first[1]:.3f})"
              f" {driver:11.3f} ({driver / first[2]:.3f})")
    base = results[next(iter(commands))]
    others = list(results.items())[1:]
    if others:
        print("ratios to the first command within each round (median, quartiles):")
    for name, columns in others:
        rate = spread([a / b for a, b in zip(columns[0], base[0])])
        cpu = spread([a / b for a, b in zip(columns[1], base[1])])
        print(f"  {name:12} increments/s {rate}; CPU/increment {cpu}")


def spread(ratios):
    """The median of `ratios` and their quartiles, as text."""
    ordered = sorted(ratios)
    if len(ordered) < 4:
        return f"{statistics.median(ordered):.3f}"
    low, _, high = statistics.quantiles(ordered, n=4)
    return f"{statistics.median(ordered):.3f} ({low:.3f} to {high:.3f})"


if __name__ == "__main__":
    main()
