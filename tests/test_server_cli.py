"""The command line, the terminal hint, discovery, and shutdown paths that need no feature."""
import json
import os
import pty
import signal
import subprocess
import threading

from jsonschema import Draft7Validator
from referencing import Registry


def run(binary, *args, input=b""):
    return subprocess.run([binary, *args], input=input, capture_output=True, timeout=30)


def test_version_and_help(stateserver_bin):
    version = run(stateserver_bin, "--version")
    assert version.returncode == 0 and version.stdout.startswith(b"stateserver ")
    help = run(stateserver_bin, "--help")
    assert help.returncode == 0
    for flag in (b"--ephemeral", b"--state-dir", b"--log-level", b"--log-format",
                 b"--max-message-bytes", b"--drain-timeout"):
        assert flag in help.stdout


def test_unknown_flag_is_exit_2_with_a_message_on_stderr(stateserver_bin):
    result = run(stateserver_bin, "--frobnicate")
    assert result.returncode == 2
    assert result.stdout == b""
    assert b"unknown option '--frobnicate'" in result.stderr


def test_bad_flag_value_is_exit_2(stateserver_bin):
    result = run(stateserver_bin, "--drain-timeout", "soon")
    assert result.returncode == 2 and b"--drain-timeout" in result.stderr


# Issue 10, item 8: `--drain-timeout 1e16` crashed with SIGILL; every numeric flag has a range.
OUT_OF_RANGE = [
    ("--drain-timeout", "1e16"), ("--drain-timeout", "86401"), ("--drain-timeout", "-1"),
    ("--drain-timeout", "inf"), ("--drain-timeout", "nan"),
    ("--max-message-bytes", "0"), ("--max-message-bytes", "-1"),
    ("--max-message-bytes", "1073741825"), ("--max-message-bytes", "99999999999999999999"),
    ("--latency", "-5"), ("--latency", "86400001"), ("--latency", "1e3"),
    ("--fail-rate", "5"), ("--fail-rate", "-0.1"), ("--fail-rate", "nan"),
    ("--seed", "-1"), ("--seed", "18446744073709551616"),
]


def test_numeric_flags_out_of_range_exit_2_naming_the_flag(stateserver_bin):
    for flag, value in OUT_OF_RANGE:
        result = run(stateserver_bin, "--ephemeral", flag, value, input=b"")
        assert result.returncode == 2, (flag, value, result.returncode, result.stderr)
        assert flag.encode() in result.stderr and value.encode() in result.stderr, (flag, value)
        assert result.stdout == b""


def test_numeric_flags_at_their_bounds_start(stateserver_bin):
    for flag, value in [("--drain-timeout", "86400"), ("--drain-timeout", "0"),
                        ("--max-message-bytes", "1"), ("--max-message-bytes", "1073741824"),
                        ("--latency", "86400000"), ("--fail-rate", "1")]:
        result = run(stateserver_bin, "--ephemeral", flag, value, input=b"")
        assert result.returncode == 0, (flag, value, result.stderr)


def test_shell_one_liner_prints_and_exits_zero(stateserver_bin):
    result = run(stateserver_bin, "--ephemeral",
                 input=b'{"jsonrpc":"2.0","id":1,"method":"store/list"}\n')
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["id"] == 1


def test_logs_go_to_stderr_as_json_lines(stateserver_bin):
    result = run(stateserver_bin, "--ephemeral", "--log-level", "debug", "--log-format", "json",
                 input=b'{"jsonrpc":"2.0","method":"dispatch","params":{}}\n')
    assert result.returncode == 0 and result.stdout == b""
    records = [json.loads(line) for line in result.stderr.splitlines()]
    failed = [r for r in records if r["message"] == "notification failed"]
    assert failed and failed[0]["method"] == "dispatch" and failed[0]["code"] == "-32602"


def test_a_terminal_gets_one_hint_line_on_stderr(stateserver_bin):
    leader, follower = pty.openpty()
    process = subprocess.Popen([stateserver_bin, "--ephemeral"], stdin=follower,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(follower)
    os.write(leader, b"\x04")  # Ctrl-D: end of input on the terminal
    out, err = process.communicate(timeout=30)
    os.close(leader)
    assert process.returncode == 0
    hint = err.decode().splitlines()
    assert len(hint) == 1 and "one per line" in hint[0]


def test_rpc_discover_is_a_valid_openrpc_document(server, testdata):
    meta = json.loads((testdata / "openrpc-meta-schema" / "schema.json").read_text())
    document = server.request("rpc.discover")
    errors = list(Draft7Validator(meta, registry=Registry()).iter_errors(document))
    assert errors == [], [e.message for e in errors[:5]]
    names = {method["name"] for method in document["methods"]}
    assert {"initialize", "dispatch", "state/get", "state/subscribe", "state/unsubscribe",
            "store/open", "store/close", "store/list", "features/list", "rpc.discover",
            "$/cancelRequest", "shutdown"} <= names
    features = server.request("features/list")["features"]
    schemas = document["components"]["schemas"]
    for feature in features:
        assert f"{feature['name']}.state" in schemas
        for action in feature["actions"]:
            assert f"{feature['name']}.action.{action}" in schemas


def test_shutdown_answers_then_exits_zero(server):
    assert server.request("shutdown") == {}
    assert server.process.wait(timeout=30) == 0


def test_requests_after_shutdown_are_refused_or_unanswered(server):
    server.send([{"jsonrpc": "2.0", "id": "s", "method": "shutdown"},
                 {"jsonrpc": "2.0", "id": "late", "method": "store/list"}])
    server.wait_closed()
    batch = server.messages[-1]
    by_id = {r["id"]: r for r in batch}
    assert by_id["s"]["result"] == {}
    assert by_id["late"]["error"]["code"] == -32010
    assert server.process.wait(timeout=30) == 0


def test_sigterm_mid_stream_writes_every_owed_response(server):
    count = 200_000
    payload = b"".join(
        b'{"jsonrpc":"2.0","id":%d,"method":"store/list"}\n' % i for i in range(1, count + 1))

    def feed():
        try:
            server.send_bytes(payload)
        except (BrokenPipeError, ValueError):
            pass  # the server stopped reading: expected after the signal

    writer = threading.Thread(target=feed)
    writer.start()
    server.wait_for(lambda m: isinstance(m, dict) and m.get("id") == 1)
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=30) == 0
    server.wait_closed()
    writer.join(timeout=30)
    ids = [m["id"] for m in server.messages if isinstance(m, dict) and "id" in m]
    # Every request the server took in was answered, in order, and nothing was cut short
    # (each line parsed, and the schema check validated all of them).
    assert ids == list(range(1, len(ids) + 1))
    assert len(ids) >= 1
