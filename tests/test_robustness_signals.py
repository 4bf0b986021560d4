"""Signals, end of the client and the end of the process, end to end and repeated (issue 10).

One SIGTERM, SIGINT or SIGHUP at any moment drains and exits 0: right after spawn, after the
client closed stdin (how editors stop a child), with a client that stopped reading. Requests
after `shutdown` are answered -32010 until the process exits; a closed stdout ends the client.
Every repro runs 100 times; each waits on what the server does (a reply, an exit), not on sleeps.
"""
import json
import os
import select
import signal
import subprocess
import time

import pytest

TIMEOUT = 30
RUNS = 100
SIGNALS = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP]
SIGNAL_IDS = ["SIGTERM", "SIGINT", "SIGHUP"]


def line(id, method, params=None):
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


def spawn(stateserver_bin, *args):
    return subprocess.Popen([stateserver_bin, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def wait(process):
    try:
        return process.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail("the server did not exit")


def read_until_id(process, id):
    """Reads lines until the response to `id`; returns it (None if stdout ended first)."""
    for raw in iter(process.stdout.readline, b""):
        message = json.loads(raw)
        if isinstance(message, dict) and message.get("id") == id:
            return message
    return None


def notes_texts(stateserver_bin, state_dir):
    process = spawn(stateserver_bin, "--state-dir", state_dir)
    out, _ = process.communicate(line(1, "state/get", {"store": "notes"}), timeout=TIMEOUT)
    assert process.returncode == 0
    reply = [json.loads(raw) for raw in out.splitlines() if json.loads(raw).get("id") == 1][0]
    return {note["text"] for note in reply["result"]["state"]["notes"]}


# Issue 10, defect 1: the end of input had already begun a drain, and the signal that followed
# was taken for a second one: exit 143/130 without draining, acknowledged notes lost.
@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_closed_stdin_then_one_signal_drains_and_keeps_acknowledged_data(
        stateserver_bin, tmp_path, signum):
    state_dir = str(tmp_path)
    for run in range(RUNS):
        process = spawn(stateserver_bin, "--state-dir", state_dir)
        process.stdin.write(line(1, "dispatch", {"store": "notes", "action": {
            "type": "add", "text": f"keep {run}"}}))
        process.stdin.flush()
        assert read_until_id(process, 1)["result"]["store"] == "notes", run  # acknowledged
        process.stdin.close()
        process.send_signal(signum)
        assert wait(process) == 0, run
        process.stdout.close()
    assert notes_texts(stateserver_bin, state_dir) == {f"keep {run}" for run in range(RUNS)}


def wait_for_the_first_instruction(process, signum):
    """Returns once the process runs its own code: the executable's first instruction blocks
    the shutdown signals (CStartupSignals), later the server handles them. Before that the
    kernel and the dynamic loader are still at work, and nothing a process does can catch a
    signal there (about 1 to 2 ms on these machines, against 5 to 8 ms of start-up before)."""
    bit = 1 << (signum - 1)
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        masks = {}
        with open(f"/proc/{process.pid}/status") as status:
            for row in status:
                key, _, value = row.partition(":")
                if key in ("SigBlk", "SigCgt"):
                    masks[key] = int(value, 16)
        if masks.get("SigBlk", 0) & bit or masks.get("SigCgt", 0) & bit:
            return
    pytest.fail("the server never blocked nor handled the signal")


# Issue 10, defect 4: a signal in the first milliseconds after spawn killed the process with
# the default action (the runtime was still starting), and the request written before it was
# never answered. Now it is answered (a result or -32010) and the exit is a clean 0.
@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_a_signal_right_after_spawn_drains_and_answers_what_was_written(stateserver_bin, signum):
    for run in range(RUNS):
        process = spawn(stateserver_bin, "--ephemeral")
        process.stdin.write(line(1, "store/list"))
        process.stdin.flush()
        wait_for_the_first_instruction(process, signum)
        process.send_signal(signum)
        reply = read_until_id(process, 1)
        assert wait(process) == 0, run
        assert reply is not None, f"run {run}: the request was never answered"
        assert "result" in reply or reply["error"]["code"] == -32010, (run, reply)
        process.stdin.close()
        process.stdout.close()


def test_a_second_distinct_signal_exits_at_once_after_persisting(stateserver_bin, tmp_path):
    state_dir = str(tmp_path)
    for run in range(20):
        process = spawn(stateserver_bin, "--state-dir", state_dir, "--drain-timeout", "600")
        process.stdin.write(line(1, "dispatch", {"store": "notes", "action": {
            "type": "add", "text": f"keep {run}"}}))
        # An effect that only the drain timeout could end: the first signal's drain waits on it.
        process.stdin.write(line(2, "dispatch", {"store": "counter", "action": {
            "type": "incrementLater", "afterMs": 600_000}}))
        process.stdin.flush()
        assert read_until_id(process, 2)["result"]["store"] == "counter"
        process.send_signal(signal.SIGTERM)
        # Wait until the first signal is handled: requests are then refused as shutting down.
        for probe in range(3, 100_000):
            process.stdin.write(line(probe, "store/list"))
            process.stdin.flush()
            if "error" in read_until_id(process, probe):
                break
        process.send_signal(signal.SIGINT)
        assert wait(process) == 128 + signal.SIGINT, run
        process.stdin.close()
        process.stdout.close()
    assert notes_texts(stateserver_bin, state_dir) == {f"keep {run}" for run in range(20)}


def fill_until_the_server_stops_reading(process, request, quiet=1.0):
    """Writes `request(i)` lines without reading stdout until stdin stays full for `quiet`
    seconds: the server has stopped reading. Lines are under PIPE_BUF, so each write is whole
    or refused. Returns how many lines went in."""
    fd = process.stdin.fileno()
    os.set_blocking(fd, False)
    sent = 0
    deadline = time.monotonic() + TIMEOUT
    while True:
        data = request(sent)
        assert len(data) <= select.PIPE_BUF
        try:
            os.write(fd, data)
            sent += 1
            continue
        except BlockingIOError:
            pass
        _, writable, _ = select.select([], [fd], [], quiet)
        if not writable:
            os.set_blocking(fd, True)
            return sent
        assert time.monotonic() < deadline, "the server never stopped reading"


def big_cart(process, megabytes):
    process.stdin.write(line("big", "dispatch", {"store": "cart", "action": {
        "type": "add", "id": "big", "name": "x" * int(megabytes * (1 << 20)), "price": 1}}))
    process.stdin.flush()
    assert read_until_id(process, "big")["result"]["store"] == "cart"


def peak_rss_mb(process):
    with open(f"/proc/{process.pid}/status") as status:
        for row in status:
            if row.startswith("VmHWM:"):
                return int(row.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def rss_mb(process):
    with open(f"/proc/{process.pid}/status") as status:
        for row in status:
            if row.startswith("VmRSS:"):
                return int(row.split()[1]) / 1024
    raise AssertionError("no VmRSS")


# Issue 10, defect 3: with ~100,000 responses unread the server outlived SIGTERM by minutes.
def test_sigterm_with_a_stalled_reader_abandons_the_output_and_exits(stateserver_bin):
    for run in range(RUNS):
        process = spawn(stateserver_bin, "--ephemeral", "--drain-timeout", "0.01")
        big_cart(process, 1 / 16)  # answered: the server is up (its start-up is another test's)
        # Stdin full for a moment: the server is behind, or already stopped on its output.
        fill_until_the_server_stops_reading(
            process, lambda i: line(i, "state/get", {"store": "cart"}) * 32, quiet=0.01)
        process.send_signal(signal.SIGTERM)
        assert wait(process) == 0, run
        process.stdout.close()
        try:
            process.stdin.close()
        except BrokenPipeError:
            pass


# Issue 10, defect 2: one line holding 1,000 `state/get` of a 4 MB state grew the server past
# 6 GB before its first byte was written. The batch's answer (here 800 MB) is written as it is
# encoded, and memory stays near the output budget.
def test_a_huge_batch_answer_is_streamed_in_bounded_memory(stateserver_bin):
    process = spawn(stateserver_bin, "--ephemeral")
    big_cart(process, 4)
    batch = [{"jsonrpc": "2.0", "id": i, "method": "state/get", "params": {"store": "cart"}}
             for i in range(200)]
    process.stdin.write((json.dumps(batch) + "\n").encode())
    process.stdin.flush()
    received = 0
    fd = process.stdout.fileno()
    # The answer is one line of about 800 MB: count it without keeping it.
    while True:
        chunk = os.read(fd, 1 << 20)
        assert chunk, "stdout ended before the batch's answer did"
        received += len(chunk)
        if chunk.endswith(b"\n"):
            break
    assert received > 200 * (4 << 20)
    peak = peak_rss_mb(process)
    assert peak < 150, f"peak resident memory {peak:.0f} MB for an 800 MB answer"
    process.stdin.close()
    assert wait(process) == 0


# Issue 10, defect 2: pipelined `state/get` of a 2 MB state with a reader that stops: the
# server stops reading input at its output budget instead of growing; then every answer comes.
def test_a_stalled_reader_stops_the_server_reading_not_growing(stateserver_bin):
    process = spawn(stateserver_bin, "--ephemeral")
    big_cart(process, 2)
    sent = fill_until_the_server_stops_reading(
        process, lambda i: line(i, "state/get", {"store": "cart"}))
    resident = rss_mb(process)
    assert resident < 150, f"{resident:.0f} MB resident with {sent} answers of 2 MB unread"
    # The reader comes back: the answers flow again, in order (all of them would be GBs).
    for expected in range(20):
        assert read_until_id(process, expected)["result"]["version"] == 1
    process.stdout.close()  # and leaves: the server shuts down on its own
    assert wait(process) == 0
    process.stdin.close()


# Issue 10, defect 6: requests that arrived after `shutdown` while effects drained were never
# answered (the reader had stopped). Every one is answered -32010 until the process exits.
def test_requests_after_shutdown_are_refused_until_the_process_exits(stateserver_bin):
    process = spawn(stateserver_bin, "--ephemeral", "--drain-timeout", "2")
    process.stdin.write(line(1, "dispatch", {"store": "counter", "action": {
        "type": "incrementLater", "afterMs": 600_000}}))
    process.stdin.flush()
    assert read_until_id(process, 1)["result"]["store"] == "counter"
    process.stdin.write(line("bye", "shutdown"))
    process.stdin.flush()
    refused = 0
    shutdown_answered = False
    for probe in range(10_000):
        try:
            process.stdin.write(line(probe, "store/list"))
            process.stdin.flush()
        except BrokenPipeError:
            break
        # Read up to this probe's answer; the shutdown's own answer comes last, just before
        # the exit, and a probe sent after that may go unread.
        reply = None
        for raw in iter(process.stdout.readline, b""):
            message = json.loads(raw)
            if message.get("id") == "bye":
                shutdown_answered = True
            elif message.get("id") == probe:
                reply = message
                break
        if reply is None:
            break
        assert reply["error"]["code"] == -32010, reply
        refused += 1
    assert wait(process) == 0
    assert refused >= 3, f"only {refused} requests were answered during a 2 s drain"
    assert shutdown_answered or read_until_id(process, "bye") is not None


# Issue 10, item 9: a client that closed our stdout is gone; the server went on applying its
# mutations until its input ended. Now the closed stdout begins the shutdown.
def test_a_closed_stdout_ends_the_client(stateserver_bin):
    for run in range(RUNS):
        process = spawn(stateserver_bin, "--ephemeral")
        process.stdout.close()
        process.stdin.write(line(1, "dispatch", {"store": "counter", "action": {
            "type": "increment"}}))
        process.stdin.flush()
        assert wait(process) == 0, run  # stdin is still open: the EPIPE ended it
        try:
            process.stdin.close()
        except BrokenPipeError:
            pass
