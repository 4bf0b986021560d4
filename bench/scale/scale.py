"""State at scale, side by side in one run (issue 28).

  scale.py --server BIN --echo ECHO [--sizes 1000,100000,1000000] [--edits K] [--out FILE]

For each size it writes one `store/open` line of that many notes (every field of
Sources/Features/Notes/Note.swift as the server writes it; about 150 bytes each) and
measures, in the same run:
  - Python `json.loads` of that line: seconds (the fastest of six processes), peak RSS;
  - the jansson echo (bench/server/echo.c, parse + dump) of that line: seconds, peak RSS;
  - the server's `store/open` of it: seconds to the answer (the fastest of six servers), peak
    RSS (VmHWM), RSS right after the answer and after two idle seconds (the server trims free
    memory when idle);
  - K pipelined `edit`s of one note each: in memory (`--history 0`), with history
    (`--history 1000`, the default) and persisted (`persist: true`, `--state-dir`): wall time
    per edit, and the server's CPU time per edit (in memory and with history the faster of two
    runs, first and last);
  - restart of the persisted store (the fastest of three, each from a copy; the highest peak):
    spawn to the answer of a cheap request, and spawn to the answer of the `store/open` that
    restores it;
  - the open's phases: read and parse (the same line naming no feature, refused), the open,
    and a `state/get` of the whole state (the answer's writing); decode and first view are
    what is left;
  - a `store/rewind` to the opened version after one edit, in memory and persisted: its patch
    replaces the whole array of notes (a left-out array replaced whole), so it carries every
    note: seconds to the answer (the patch comes before it), the peak RSS it added, and RSS
    after.
Prints one JSON object per measurement, a Markdown table of the ratios, and issue 28's targets
(largest size against the smallest) at the end; exits 1 when a target is missed.
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time


EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def stamp(seconds):
    return (EPOCH + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def note(i):
    # A note as the server publishes it (Sources/Features/Notes/Note.swift), every field written.
    # Every date differs, as in a real list: a state of equal dates would flatter any cache of
    # the last date read or written.
    return {"id": f"n{i}", "serverId": None, "text": f"note {i}",
            "createdAt": stamp(i * 7), "updatedAt": stamp(i * 7 + 3),
            "syncStatus": "synchronized", "serverText": None}


def message(i, method, params):
    return (json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params},
                       separators=(",", ":")) + "\n").encode()


def open_line(n, persist):
    params = {"feature": "notes", "store": "bench", "state": {"notes": [note(i) for i in range(n)]}}
    if persist:
        params["persist"] = True
    return message(1, "store/open", params)


def edit_lines(n, k, first):
    return b"".join(
        message(i, "dispatch", {"store": "bench", "action": {
            "type": "edit", "id": f"n{(i * 7919) % n}", "text": f"edit {i}"}})
        for i in range(first, first + k))


def status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for row in f:
            key, _, value = row.partition(":")
            if key in ("VmHWM", "VmRSS"):
                fields[key] = int(value.split()[0]) * 1024
    return fields


def cpu_ns(pid):
    """CPU time the process has used, every thread, in nanoseconds (schedstat): what an edit
    costs the server whatever else the machine runs, unlike the wall time a client sees."""
    total = 0
    for name in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{name}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError):
            pass
    return total


def python_loads(path, runs=3):
    """The fastest of `runs` fresh processes: a single `json.loads` of the 170 MB line took
    from 0.8 to 2.4 s on the same machine from run to run, and a slow baseline flatters every
    ratio against it. Each run is its own process, so each peak is its own."""
    code = ("import json,resource,sys,time\n"
            "data=open(sys.argv[1],'rb').read()\n"
            "t=time.perf_counter(); v=json.loads(data); s=time.perf_counter()-t\n"
            "print(s, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss*1024)\n")
    best = None
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, check=True)
        seconds, peak = out.stdout.split()
        if best is None or float(seconds) < best["seconds"]:
            best = {"seconds": float(seconds), "peak": int(peak)}
    return best


def echo(binary, path):
    with open(path, "rb") as stdin:
        start = time.perf_counter()
        child = subprocess.Popen([binary], stdin=stdin, stdout=subprocess.DEVNULL)
        _, _, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
    child.returncode = 0
    return {"seconds": seconds, "peak": usage.ru_maxrss * 1024}


class Server:
    """A server on pipes; `await_id` reads until the line answering an id has ended."""

    def __init__(self, cmd):
        self.start = time.perf_counter()
        self.child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, bufsize=0)
        self.fd = self.child.stdout.fileno()
        self.pending = b""
        self.buffer = bytearray(1 << 20)

    def send(self, data):
        thread = threading.Thread(target=self._write, args=(data,))
        thread.start()
        return thread

    def _write(self, data):
        try:
            self.child.stdin.write(data)
            self.child.stdin.flush()
        except BrokenPipeError:
            pass

    def await_id(self, i):
        # As light as a client can be, so that the time is the server's: the answer is read into
        # one reused buffer, and of a long line only its head (where the id is) is kept; copying
        # each megabyte read onto the line's head cost a copy of the whole answer on a core the
        # server shares.
        marks = (b'"id":%d,' % i, b'"id":%d}' % i)
        pending, start = self.pending, 0  # read, not yet looked at from `start`, a line's start
        while True:
            newline = pending.find(b"\n", start)
            if newline < 0:
                head, _ = self._line_end(pending[start:])
                pending, start = self.pending, 0
            else:
                head, start = pending[start:min(newline, start + 64)], newline + 1
            if any(m in head[:64] for m in marks):
                self.pending = pending[start:]
                return

    def _line_end(self, head):
        """Reads until the line that begins with `head` ends; returns its first bytes and leaves
        what followed its end in `self.pending`."""
        view = memoryview(self.buffer)
        while True:
            count = self.child.stdout.readinto(view)
            if not count:
                raise SystemExit("the server closed stdout before the answer")
            newline = self.buffer.find(b"\n", 0, count)
            if len(head) < 64:
                head += bytes(view[:min(count if newline < 0 else newline, 64)])
            if newline >= 0:
                self.pending = bytes(view[newline + 1:count])
                return head, newline

    def close(self):
        self.child.stdin.close()
        while os.read(self.fd, 1 << 20):
            pass
        self.child.wait()


def server_cmd(binary, history, state_dir):
    cmd = [binary, "--max-message-bytes", str(1 << 30), "--history", str(history)]
    # Without a state directory nothing is persisted (the default notes store included).
    return cmd + (["--state-dir", state_dir] if state_dir else ["--ephemeral"])


def open_and_edit(binary, n, k, history, state_dir, line, edits):
    server = Server(server_cmd(binary, history, state_dir))
    start = time.perf_counter()
    server.send(line).join()
    server.await_id(1)
    opened = time.perf_counter() - start
    memory = status(server.child.pid)
    time.sleep(2)
    idle = status(server.child.pid)
    cpu = cpu_ns(server.child.pid)
    start = time.perf_counter()
    writer = server.send(edits)
    server.await_id(k + 1)
    edit_seconds = time.perf_counter() - start
    edit_cpu = cpu_ns(server.child.pid) - cpu
    writer.join()
    after_edits = status(server.child.pid)
    server.close()
    return {"open_s": opened, "peak": memory["VmHWM"], "after": memory["VmRSS"],
            "idle": idle["VmRSS"], "edit_us": edit_seconds / k * 1e6,
            "edit_cpu_us": edit_cpu / k / 1e3,
            "after_edits": after_edits["VmRSS"], "peak_total": after_edits["VmHWM"]}


def open_alone(binary, line):
    """Seconds from sending the `store/open` line to the end of its answer, in a fresh server."""
    server = Server(server_cmd(binary, 0, None))
    start = time.perf_counter()
    server.send(line).join()
    server.await_id(1)
    seconds = time.perf_counter() - start
    server.close()
    return seconds


def phases(binary, n):
    """Where the open's time goes, from outside: the same line naming no feature is read, parsed
    and refused (`read_parse_s`); the open itself (`open_s`); a `state/get` of the whole state
    after it writes the view once more (`answer_s`). What is left of the open is the decode into
    the State and the first encoding of the view (`decode_view_s`)."""
    state = {"notes": [note(i) for i in range(n)]}
    lines = [message(1, "store/open", {"feature": "no-such-feature", "store": "x", "state": state}),
             message(2, "store/open", {"feature": "notes", "store": "bench", "state": state}),
             message(3, "state/get", {"store": "bench"})]
    del state
    server = Server(server_cmd(binary, 0, None))
    seconds = []
    for i, line in enumerate(lines, 1):
        start = time.perf_counter()
        server.send(line).join()
        server.await_id(i)
        seconds.append(time.perf_counter() - start)
    server.close()
    parse, opened, answer = seconds
    return {"read_parse_s": parse, "open_s": opened, "answer_s": answer,
            "decode_view_s": max(0.0, opened - parse - answer)}


def restart(binary, n, state_dir):
    server = Server(server_cmd(binary, 0, state_dir))
    server.send(message(1, "rpc.discover", {})).join()
    server.await_id(1)
    first = time.perf_counter() - server.start
    line = message(2, "store/open", {"feature": "notes", "store": "bench", "persist": True})
    server.send(line).join()
    server.await_id(2)
    opened = time.perf_counter() - server.start
    memory = status(server.child.pid)
    server.close()
    return {"first_answer_s": first, "restored_s": opened, "peak": memory["VmHWM"],
            "after": memory["VmRSS"]}


def rewind(binary, n, line, state_dir):
    """A `store/rewind` to version 0 after one edit, by a client subscribed to the whole
    state: the array of notes is replaced whole, so the patch carries every note. The peak is
    reset just before it (`clear_refs`), so `added` is what the rewind itself held at most."""
    server = Server(server_cmd(binary, 1000, state_dir))
    server.send(line).join()
    server.await_id(1)
    server.send(message(2, "state/subscribe", {"store": "bench"})).join()
    server.await_id(2)
    server.send(edit_lines(n, 1, 3)).join()
    server.await_id(3)
    with open(f"/proc/{server.child.pid}/clear_refs", "w") as f:
        f.write("5")
    before = status(server.child.pid)
    start = time.perf_counter()
    server.send(message(4, "store/rewind", {"store": "bench", "version": 0})).join()
    server.await_id(4)
    seconds = time.perf_counter() - start
    after = status(server.child.pid)
    server.close()
    return {"rewind_s": seconds, "added": max(0, after["VmHWM"] - before["VmRSS"]),
            "after": after["VmRSS"]}


def measure(args, n, work):
    k = args.edits
    path = os.path.join(work, f"open-{n}.json")
    line = open_line(n, persist=False)
    with open(path, "wb") as f:
        f.write(line)
    row = {"n": n, "bytes": len(line)}
    row["python"] = python_loads(path)
    row["echo"] = echo(args.echo, path)
    opens = [open_alone(args.server, line) for _ in range(2)]
    edits = edit_lines(n, k, 2)
    row["memory"] = open_and_edit(args.server, n, k, 0, None, line, edits)
    row["phases"] = phases(args.server, n)
    row["history"] = open_and_edit(args.server, n, k, 1000, None, line, edits)
    state_dir = os.path.join(work, f"state-{n}")
    os.makedirs(state_dir)
    row["persisted"] = open_and_edit(args.server, n, k, 0, state_dir,
                                     open_line(n, persist=True), edits)
    # The restore, like the open, is the fastest of several (three), each from a copy of the
    # persisted store as the edits left it (a restore may compact what it restored); its peak
    # is the highest of the three.
    restarts = []
    for index in range(3):
        copy = os.path.join(work, f"state-{n}-{index}")
        shutil.copytree(state_dir, copy)
        restarts.append(restart(args.server, n, copy))
        shutil.rmtree(copy)
    row["restart"] = min(restarts, key=lambda r: r["restored_s"])
    row["restart"]["peak"] = max(r["peak"] for r in restarts)
    row["rewind"] = rewind(args.server, n, line, None)
    rewind_dir = os.path.join(work, f"rewind-{n}")
    os.makedirs(rewind_dir)
    row["rewind_persisted"] = rewind(args.server, n, open_line(n, persist=True), rewind_dir)
    shutil.rmtree(rewind_dir)
    # The edits in memory are timed twice, first and last, and the faster kept: the first server
    # started after the echo gave back its 1.3 GB ran slow in some runs (2026-12-05: edits of
    # 29.6 us of CPU against 13 us), which the same build never showed again. The open is the
    # fastest of six, as `json.loads` is: two alone after the first three `json.loads`, the
    # two opens of those runs, and two alone before the last three. This VM's speed drifts
    # with its host (the same binary's open took 1.6 s and 2.5 s within minutes, its user time
    # moving with it), and the fastest of six against the fastest of two had the drift favour
    # the baseline.
    again = open_and_edit(args.server, n, k, 0, None, line, edits)
    for key in ("edit_us", "edit_cpu_us"):
        row["memory"][key] = min(row["memory"][key], again[key])
    # The edits with history too, as their ratio to the edits in memory is a target: timed once,
    # one run's noise decided it (2026-12-05: the same build measured 1.05x to 1.30x history /
    # memory at 1,000,000 notes, and 1.05x to 1.61x against 1,000 notes, in six runs).
    history_again = open_and_edit(args.server, n, k, 1000, None, line, edits)
    for key in ("edit_us", "edit_cpu_us"):
        row["history"][key] = min(row["history"][key], history_again[key])
    opens += [open_alone(args.server, line) for _ in range(2)]
    row["memory"]["open_s"] = min([row["memory"]["open_s"], again["open_s"], *opens])
    # And `json.loads` three times more, at the end: all three first runs took 1.99 s once
    # (against 0.85 to 0.95 s in every other run that day), which made the open look 0.99x.
    later = python_loads(path)
    if later["seconds"] < row["python"]["seconds"]:
        row["python"] = later
    shutil.rmtree(state_dir)
    os.unlink(path)
    print(json.dumps(row), flush=True)
    return row


def table(rows):
    mb = 1 << 20
    small = rows[0]
    out = ["| notes | JSON MB | open s (python, echo) | open / python | peak MB (/ JSON) "
           "| after MB (/ JSON) | idle MB | edit us mem / hist / persisted | server CPU us per edit | vs smallest (CPU) "
           "| hist / mem (CPU) | restart: first answer, restored s |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        m, h, p, s = r["memory"], r["history"], r["persisted"], r["restart"]
        size = r["bytes"] / mb
        out.append(
            f"| {r['n']:,} | {size:.1f} | {m['open_s']:.3f} ({r['python']['seconds']:.3f}, "
            f"{r['echo']['seconds']:.3f}) | {m['open_s'] / r['python']['seconds']:.2f}x "
            f"| {m['peak'] / mb:.0f} ({m['peak'] / r['bytes']:.1f}x; python "
            f"{r['python']['peak'] / mb:.0f}, echo {r['echo']['peak'] / mb:.0f}) "
            f"| {m['after'] / mb:.0f} ({m['after'] / r['bytes']:.1f}x) | {m['idle'] / mb:.0f} "
            f"| {m['edit_us']:.1f} / {h['edit_us']:.1f} / {p['edit_us']:.1f} "
            f"| {m['edit_cpu_us']:.1f} / {h['edit_cpu_us']:.1f} / {p['edit_cpu_us']:.1f} "
            f"| {m['edit_cpu_us'] / small['memory']['edit_cpu_us']:.2f}x / "
            f"{h['edit_cpu_us'] / small['history']['edit_cpu_us']:.2f}x / "
            f"{p['edit_cpu_us'] / small['persisted']['edit_cpu_us']:.2f}x "
            f"| {h['edit_cpu_us'] / m['edit_cpu_us']:.2f}x "
            f"| {s['first_answer_s']:.3f}, {s['restored_s']:.3f} |")
    out += ["", "| notes | open s | read + parse | decode + first view | answer (state/get) |",
            "|---|---|---|---|---|"]
    for r in rows:
        f = r["phases"]
        out.append(f"| {r['n']:,} | {f['open_s']:.3f} | {f['read_parse_s']:.3f} "
                   f"| {f['decode_view_s']:.3f} | {f['answer_s']:.3f} |")
    out += ["", "| notes | rewind s (/ python) | peak added MB (/ JSON) | after MB "
            "| persisted: rewind s, peak added MB (/ JSON), after MB |", "|---|---|---|---|---|"]
    for r in rows:
        w, p = r["rewind"], r["rewind_persisted"]
        out.append(f"| {r['n']:,} | {w['rewind_s']:.3f} ({w['rewind_s'] / r['python']['seconds']:.2f}x) "
                   f"| {w['added'] / mb:.0f} ({w['added'] / r['bytes']:.2f}x) | {w['after'] / mb:.0f} "
                   f"| {p['rewind_s']:.3f}, {p['added'] / mb:.0f} ({p['added'] / r['bytes']:.2f}x), "
                   f"{p['after'] / mb:.0f} |")
    return "\n".join(out)


def targets(rows):
    """Issue 28's targets, measured at the largest size against the smallest: the open at the
    largest at most 1.5x Python's `json.loads` of the same line, its peak memory at most 3x the
    JSON's size and what stays resident after it at most 2x; the restore of the persisted store
    at most 1.5x `json.loads` too and its peak at most 3x (the issue names restore among what
    must open at the JSON's speed and size); one `edit` at
    the largest at most 1.5x one at the smallest (in memory, with history, persisted), history
    at most 1.2x no history at the largest, and the first answer after a restart with the
    largest persisted store within 1 s. An edit's cost is the server's CPU time per edit: on a
    shared machine the wall time of 2,000 pipelined edits moves with the other processes (it
    is in the table beside). Returns the Markdown rows and whether all were met."""
    small, large = rows[0], rows[-1]
    found = []
    m, size = large["memory"], large["bytes"]
    ratio = m["open_s"] / large["python"]["seconds"]
    found.append((f"open {large['n']:,} notes / Python `json.loads` of the line", f"{ratio:.2f}x",
                  "<= 1.5x", ratio <= 1.5))
    found.append(("peak memory of that open / the JSON's size", f"{m['peak'] / size:.1f}x",
                  "<= 3x", m["peak"] <= 3 * size))
    found.append(("resident after it / the JSON's size", f"{m['after'] / size:.1f}x",
                  "<= 2x", m["after"] <= 2 * size))
    for kind, label in (("memory", "in memory"), ("history", "with history"),
                        ("persisted", "persisted")):
        ratio = large[kind]["edit_cpu_us"] / small[kind]["edit_cpu_us"]
        found.append((f"one edit {label}, {large['n']:,} / {small['n']:,} notes",
                      f"{ratio:.2f}x", "<= 1.5x", ratio <= 1.5))
    ratio = large["history"]["edit_cpu_us"] / large["memory"]["edit_cpu_us"]
    found.append((f"one edit with history / without, {large['n']:,} notes", f"{ratio:.2f}x",
                  "<= 1.2x", ratio <= 1.2))
    ratio = large["restart"]["restored_s"] / large["python"]["seconds"]
    found.append((f"restore of the persisted {large['n']:,} notes (spawn to the answer of its "
                  "`store/open`) / Python `json.loads` of the line", f"{ratio:.2f}x", "<= 1.5x",
                  ratio <= 1.5))
    restore_peak = large["restart"]["peak"]
    found.append(("peak memory of that restore / the JSON's size",
                  f"{restore_peak / size:.1f}x", "<= 3x", restore_peak <= 3 * size))
    first = large["restart"]["first_answer_s"]
    found.append((f"restart with {large['n']:,} persisted notes: spawn to the first answer",
                  f"{first:.3f} s", "<= 1 s", first <= 1.0))
    # A patch that carries a huge value streams out without a second full copy: the rewind's
    # patch carries every note, and what it adds to the peak stays below the JSON's size (a copy
    # of the text would be 1x, a tree of it about 3x). In memory: a persisted store also writes
    # the whole state to its database first (the table beside).
    w = large["rewind"]
    found.append((f"peak added by a `store/rewind` of {large['n']:,} notes (its patch carries "
                  "every note) / the JSON's size", f"{w['added'] / size:.2f}x", "< 1x",
                  w["added"] < size))
    ratio = w["rewind_s"] / large["python"]["seconds"]
    found.append(("that rewind, to its answer (the patch before it) / Python `json.loads` of the "
                  "line", f"{ratio:.2f}x", "<= 1.5x", ratio <= 1.5))
    out = ["| target | measured | wanted | met |", "|---|---|---|---|"]
    out += [f"| {what} | {value} | {wanted} | {'yes' if met else 'NO'} |"
            for what, value, wanted, met in found]
    return "\n".join(out), all(met for *_, met in found)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True, action="append")
    parser.add_argument("--echo", required=True)
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--edits", type=int, default=10000)
    parser.add_argument("--out")
    args = parser.parse_args()
    servers = args.server
    work = tempfile.mkdtemp(prefix="scale-")
    report = []
    try:
        for n in [int(s) for s in args.sizes.split(",")]:
            # Each server binary at each size, alternated, so that they see the same machine.
            for binary in servers:
                args.server = binary
                row = measure(args, n, work)
                row["server"] = binary
                report.append(row)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = []
    met = True
    for binary in servers:
        rows = [r for r in report if r["server"] == binary]
        name = os.path.relpath(binary) if len(servers) > 1 else "the release build"
        text.append(f"\n{name}\n")
        text.append(table(rows))
        goals, all_met = targets(rows)
        text += ["", goals]
        met = met and all_met
    print("\n".join(text))
    if os.environ.get("BENCH_OUT"):
        # The page's section (bench/benchmarks_md.py): the tables, not the JSON lines.
        with open(os.path.join(os.environ["BENCH_OUT"], "scale.md"), "w") as f:
            f.write("\n".join(text) + "\n")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
