"""The Python client's (clients/python) sync API beyond the basics: recording opt-in and
capped, `ServerExited` at once, `shutdown()`, `wait_until`, and the mirror's change callback."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stateserver import Client, Mirror, ServerExited

TIMEOUT = 30  # only bounds a hang

# A stand-in for a broken server: it answers the first line with something that is not JSON,
# then stays alive, so only the client's own check can end the wait early.
NOT_JSON_SERVER = "import sys, time; sys.stdin.readline(); print('oops, not JSON', flush=True); " \
    "time.sleep(600)"


def increment(client, **options):
    return client.dispatch("counter", {"type": "increment"}, **options)


def test_a_client_records_nothing_unless_asked(stateserver_bin):
    with Client.spawn([stateserver_bin, "--ephemeral"]) as client:
        for _ in range(200):
            increment(client)
        # 200 patches and 200 responses went by; none of them is kept.
        assert len(client.messages) == 400 and list(client.messages) == []
        assert list(client.notifications) == [] and client._responses == {}


def test_recording_keeps_the_last_messages_and_refuses_the_dropped_ones(stateserver_bin):
    with Client.spawn([stateserver_bin, "--ephemeral"], record=6) as client:
        for _ in range(10):
            increment(client)
        assert len(client.messages) == 20 and len(list(client.messages)) == 6
        assert client.messages[-1]["result"]["version"] == 10
        assert [m["result"]["version"] for m in client.messages[14:] if "result" in m] == [8, 9, 10]
        with pytest.raises(LookupError, match="no longer recorded"):
            client.messages[0]
        with pytest.raises(LookupError):
            client.messages[2:]
        assert len(list(client.notifications)) == 6 and len(client.notifications) == 10


def test_a_line_that_is_not_json_raises_server_exited_at_once():
    client = Client.spawn([sys.executable, "-c", NOT_JSON_SERVER])
    try:
        # Without the check the reader thread died and this waited for its whole timeout.
        with pytest.raises(ServerExited, match="not JSON"):
            client.request("store/list", timeout=TIMEOUT)
        with pytest.raises(ServerExited, match="not JSON"):
            client.request("store/list", timeout=TIMEOUT)
        assert client.process.poll() is None  # the process is alive: the client gave up on it
    finally:
        client.process.kill()
        client.close(timeout=TIMEOUT)


def test_the_server_dying_mid_request_raises_server_exited(stateserver_bin):
    client = Client.spawn([stateserver_bin, "--ephemeral"])
    client.send({"jsonrpc": "2.0", "id": "slow", "method": "dispatch", "params": {
        "store": "counter", "action": {"type": "incrementLater", "afterMs": 600000},
        "wait": "settled"}})
    assert client.request("store/list", timeout=TIMEOUT)  # the slow one is in the server
    client.process.kill()
    with pytest.raises(ServerExited, match="exited before answering id 'slow'"):
        client.response("slow", timeout=TIMEOUT)
    with pytest.raises(ServerExited):
        increment(client)
    client.close(timeout=TIMEOUT)


def test_shutdown_drains_and_returns_the_exit_status(stateserver_bin):
    client = Client.spawn([stateserver_bin, "--ephemeral"], record=True)
    client.dispatch("counter", {"type": "incrementLater", "afterMs": 50})
    assert client.shutdown(timeout=TIMEOUT) == 0
    # The effect in flight finished before the server stopped: its patch was written.
    patches = [m for m in client.notifications if m["method"] == "state/patch"]
    assert [p["params"]["patch"] for p in patches] == [
        [{"op": "replace", "path": "/count", "value": 1}]]
    with pytest.raises(ServerExited):
        increment(client)


def test_wait_until_sees_a_state_an_effect_publishes_later(server):
    server.dispatch("counter", {"type": "incrementLater", "afterMs": 100})
    state = server.wait_until("counter", lambda state: state["count"] == 1, timeout=TIMEOUT)
    assert state == {"count": 1}
    with pytest.raises(TimeoutError, match="never satisfied.*'count': 1"):
        server.wait_until("counter", lambda state: state["count"] == 5, timeout=0.2)


def test_a_mirror_calls_on_change_for_the_load_and_every_patch(server):
    changes = []
    mirror = Mirror(server, "counter", on_change=lambda state, change: changes.append(
        (change["reason"], change["version"], state["count"])))
    for _ in range(3):
        result = increment(server)
    mirror.sync(result["version"], timeout=TIMEOUT)
    assert changes == [("load", 0, 0), ("patch", 1, 1), ("patch", 2, 2), ("patch", 3, 3)]


def test_a_change_callback_that_raises_is_kept_and_the_mirror_goes_on(server):
    def broken(state, change):
        raise ValueError("render bug")

    mirror = Mirror(server, "counter", on_change=broken)
    result = increment(server)
    assert mirror.sync(result["version"], timeout=TIMEOUT) == {"count": 1}
    assert [type(error) for _, error in server.listener_errors] == [ValueError, ValueError]


def test_the_package_type_checks_strictly():
    # The package ships py.typed: its own hints must hold for users who run mypy --strict.
    package = Path(__file__).resolve().parent.parent / "clients" / "python"
    assert (package / "stateserver" / "py.typed").exists()
    result = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", os.devnull,
                             "stateserver"], cwd=package, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
