"""The sans-I/O core of both Python clients (`stateserver.connection`, `stateserver.replica`),
tested by values: bytes and messages in, lines to send and verdicts out, no process. And the
behaviours the sync and async clients used to disagree on, now shared (issue 27)."""
import json
import subprocess
import sys

import pytest

from stateserver import Client, Mirror, RPCError
from stateserver.connection import Connection, Framer, id_key, result_of
from stateserver.replica import APPLIED, GAP, SKIPPED, Replica

TIMEOUT = 10


def test_the_framer_joins_chunks_and_ends_with_a_line_without_newline():
    framer = Framer()
    assert framer.feed(b'{"a":') == []
    assert framer.feed(b'1}\n{"b":2}\n{"c"') == [b'{"a":1}', b'{"b":2}']
    assert framer.finish() == [b'{"c"']
    assert framer.finish() == []
    assert Framer().finish() == []


def test_a_request_line_carries_the_next_id_and_its_response_runs_the_hook():
    connection = Connection()
    answers = []
    id, line = connection.request("state/get", {"store": "counter"}, on_response=answers.append)
    assert id == 1 and json.loads(line) == {"jsonrpc": "2.0", "id": 1, "method": "state/get",
                                            "params": {"store": "counter"}}
    assert line.endswith(b"\n") and b" " not in line
    assert connection.request("shutdown")[0] == 2
    incoming = connection.receive(b'{"jsonrpc":"2.0","id":1,"result":{"version":3}}')
    assert incoming is not None and incoming.responses == [
        (id_key(1), {"jsonrpc": "2.0", "id": 1, "result": {"version": 3}})]
    assert answers == [{"jsonrpc": "2.0", "id": 1, "result": {"version": 3}}]
    connection.receive(b'{"jsonrpc":"2.0","id":1,"result":{}}')  # the hook ran once
    assert len(answers) == 1


def test_ids_of_different_types_stay_apart():
    assert id_key(1) != id_key("1")
    incoming = Connection().receive(
        b'[{"jsonrpc":"2.0","id":"1","result":1},{"jsonrpc":"2.0","method":"m"},3]')
    assert incoming is not None
    assert [key for key, _ in incoming.responses] == ['"1"']
    assert incoming.notifications == [{"jsonrpc": "2.0", "method": "m"}]


def test_an_error_response_raises_rpc_error_with_its_data():
    with pytest.raises(RPCError) as raised:
        result_of({"id": 1, "error": {"code": -32602, "message": "bad", "data": {"pointer": "/a"}}})
    assert (raised.value.code, raised.value.data) == (-32602, {"pointer": "/a"})
    assert result_of({"id": 1, "result": None}) is None


def test_a_line_that_is_not_json_ends_the_conversation_and_later_lines_are_drained():
    connection = Connection(record=True)
    seen = []
    connection.add_listener(seen.append)
    closed = []
    assert connection.on_close(lambda: closed.append(True))
    assert connection.receive(b"oops") is None
    assert "not JSON" in (connection.failure or "")
    assert connection.receive(b'{"jsonrpc":"2.0","method":"m"}') is None
    assert seen == []
    for callback in connection.end():
        callback()
    assert closed == [True] and connection.end() == [] and not connection.on_close(print)
    assert "not JSON" in str(connection.exited("the answer"))


def test_a_listener_that_raises_is_kept_and_the_others_still_run():
    connection = Connection()
    seen = []

    def broken(message):
        raise ValueError("render bug")

    connection.add_listener(broken)
    connection.add_listener(seen.append)
    connection.receive(b'{"jsonrpc":"2.0","method":"m"}')
    assert seen == [{"jsonrpc": "2.0", "method": "m"}]
    assert [type(error) for _, error in connection.listener_errors] == [ValueError]
    connection.remove_listener(broken)
    connection.remove_listener(broken)  # twice: no error


def patch(start, to, *operations, path=""):
    params = {"store": "s", "from": start, "to": to, "patch": list(operations)}
    if path:
        params["path"] = path
    return params


def test_a_replica_applies_the_patch_that_follows_and_skips_the_old_and_the_early():
    replica = Replica("s")
    assert replica.patch(patch(0, 1, {"op": "replace", "path": "/n", "value": 1})) == SKIPPED
    replica.load({"version": 1, "state": {"n": 1}}, subscription=True)
    assert replica.patch(patch(0, 1, {"op": "replace", "path": "/n", "value": 1})) == SKIPPED
    assert replica.patch(patch(1, 3, {"op": "replace", "path": "/n", "value": 3})) == APPLIED
    assert (replica.state, replica.version, replica.patches, replica.coalesced) == ({"n": 3}, 3, 1, 1)
    assert replica.patch(patch(5, 6, {"op": "replace", "path": "/n", "value": 6})) == GAP
    assert replica.state == {"n": 3}


def test_a_patch_that_does_not_fit_the_copy_is_a_gap_not_an_error():
    # The sync mirror used to raise inside its listener (kept in listener_errors) and stay
    # stale forever; the async one resynced. Both resync now.
    replica = Replica("s")
    replica.load({"version": 0, "state": {"n": 0}}, subscription=True)
    assert replica.patch(patch(0, 1, {"op": "remove", "path": "/missing"})) == GAP
    assert (replica.state, replica.version) == ({"n": 0}, 0)


def test_a_path_replica_refuses_a_pointer_that_only_shares_its_prefix():
    # The sync mirror checked `startswith(path)`: a mirror of /c rebased /count to /rootount.
    replica = Replica("s", "/c")
    replica.load({"version": 0, "state": 1}, subscription=True)
    assert replica.patch(patch(0, 1, {"op": "replace", "path": "/count", "value": 2},
                               path="/c")) == GAP
    assert replica.patch(patch(0, 1, {"op": "replace", "path": "/c", "value": 2},
                               path="/c")) == APPLIED
    assert replica.state == 2


def test_a_path_replica_after_a_plain_get_takes_a_patch_from_before_that_version():
    # A path's next patch starts where its subtree last changed, which may be before the version
    # a `state/get` answered: the sync mirror took that for a gap and fetched again.
    replica = Replica("s", "/a")
    replica.load({"version": 7, "state": {"x": 1}}, subscription=False)
    assert replica.patch(patch(4, 8, {"op": "replace", "path": "/a/x", "value": 2},
                               path="/a")) == APPLIED
    assert replica.state == {"x": 2} and replica.current == 8


def test_a_path_that_goes_and_comes_back():
    replica = Replica("s", "/a")
    replica.load({"version": 1, "state": {"x": 1}}, subscription=True)
    assert replica.patch(patch(1, 2, {"op": "remove", "path": "/a"}, path="/a")) == APPLIED
    assert (replica.exists, replica.state) == (False, None)
    replica.lose_path()
    assert replica.patch(patch(9, 10, {"op": "add", "path": "/a", "value": {"x": 5}},
                               path="/a")) == APPLIED
    assert (replica.exists, replica.state, replica.version) == (True, {"x": 5}, 10)


# A server that subscribes `s` at version 0, then writes a patch to version 1 that does not
# fit (it removes a key the state lacks), and answers a later `state/get` with version 1.
MISFIT_SERVER = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    def answer(result):
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
    if request["method"] == "state/subscribe":
        answer({"store": "s", "version": 0, "state": {"n": 0}})
        print(json.dumps({"jsonrpc": "2.0", "method": "state/patch", "params": {
            "store": "s", "from": 0, "to": 1, "patch": [{"op": "remove", "path": "/gone"}]}}),
            flush=True)
    elif request["method"] == "state/get":
        answer({"store": "s", "version": 1, "state": {"n": 1}})
"""


def test_the_sync_mirror_resyncs_when_a_patch_does_not_fit():
    process = subprocess.Popen([sys.executable, "-c", MISFIT_SERVER], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    with Client(process) as client:
        mirror = Mirror(client, "s")
        assert mirror.sync(1, timeout=TIMEOUT) == {"n": 1}
        assert mirror.resyncs == 1 and client.listener_errors == []


def test_the_phases_of_a_conversation():
    connection = Connection()
    assert connection.phase == "open" and connection.server is None
    id, _ = connection.request("initialize", {"protocolVersion": 1})
    connection.receive(json.dumps({"jsonrpc": "2.0", "id": id, "result": {
        "protocolVersion": 1, "server": {"name": "stateserver"}}}).encode())
    assert connection.phase == "initialized"
    assert connection.server == {"protocolVersion": 1, "server": {"name": "stateserver"}}
    connection.request("shutdown")
    assert connection.phase == "shutting down" and not connection.closed
    connection.end()
    assert connection.phase == "over" and connection.closed


def test_a_refused_initialize_leaves_the_conversation_open():
    connection = Connection()
    id, _ = connection.request("initialize", {"protocolVersion": 2})
    connection.receive(json.dumps({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32602, "message": "Invalid params"}}).encode())
    assert connection.phase == "open" and connection.server is None
