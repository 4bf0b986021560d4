"""What the kill -9 tests share: a persistent server on a state directory, one request at a time,
and a pipelined burst cut short by SIGKILL after a given number of its responses were read.

The kill comes after a number of responses (not after a sleep), so the moment is random but
the tests do not depend on the machine's speed.
"""
import json
import signal
import subprocess

TIMEOUT = 30


def start(binary, state_dir):
    return subprocess.Popen(
        [binary, "--state-dir", state_dir, "--latency", "0"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def request(process, method, params, id):
    line = json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    process.stdin.write((line + "\n").encode())
    process.stdin.flush()
    while True:
        raw = process.stdout.readline()
        assert raw, f"the server ended: {process.stderr.read().decode(errors='replace')}"
        message = json.loads(raw)
        if message.get("id") == id:
            assert "result" in message, message
            return message["result"]


def burst_then_kill(server, lines, expected, kill_after, acknowledge):
    """Writes `lines` at once, reads until `kill_after` responses to ids in `expected` came
    back (each one a success, handed to `acknowledge`), then kills the server with SIGKILL. The
    kill happens even when reading fails, so a failing trial leaves no server behind."""
    try:
        server.stdin.write(("\n".join(lines) + "\n").encode())
        server.stdin.flush()
        read = 0
        while read < kill_after:
            raw = server.stdout.readline()
            assert raw, "the server ended before the kill"
            message = json.loads(raw)
            if message.get("id") not in expected:
                continue
            assert "result" in message, message
            read += 1
            acknowledge(message)
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=TIMEOUT)
        for pipe in (server.stdin, server.stdout, server.stderr):
            pipe.close()
