"""JSON-RPC 2.0 to the letter: the specification's examples, bad input of every kind, and the
JSONTestSuite files sent as lines. Only protocol-level methods are used, so these tests run
whatever features the binary registers."""
import json

import pytest


def probe(client, tag):
    """A request whose answer proves that every line sent before it was served."""
    client.send({"jsonrpc": "2.0", "id": f"probe-{tag}", "method": "store/list"})


def replies_until_probe(client, tag, start):
    """The messages after index `start` up to (not including) the probe's answer."""
    probe_id = f"probe-{tag}"
    found = client.wait_for(lambda m: isinstance(m, dict) and m.get("id") == probe_id, start=start)
    index = client.messages.index(found, start)
    return client.messages[start:index]


def exchange(client, line, tag="x"):
    start = len(client.messages)
    client.send_line(line)
    probe(client, tag)
    return replies_until_probe(client, tag, start)


# The specification's examples (jsonrpc.org/specification §7), with this server's methods in
# place of `subtract`, `sum`, `get_data` (store/list, features/list) and a `dispatch`
# notification in place of `notify_hello`; unknown methods keep their names.

def test_call_of_a_method_that_does_not_exist(server):
    reply = exchange(server, '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}')
    assert len(reply) == 1
    assert reply[0]["id"] == "1"
    assert reply[0]["error"]["code"] == -32601
    assert reply[0]["error"]["message"] == "Method not found"


def test_unknown_method_with_array_params_is_method_not_found(server):
    # The specification's positional-params example, against a method this server lacks.
    reply = exchange(server, '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}')
    assert [(r["id"], r["error"]["code"]) for r in reply] == [(1, -32601)]
    assert reply[0]["error"]["message"] == "Method not found"


def test_call_with_invalid_json(server):
    reply = exchange(server, '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]')
    assert len(reply) == 1
    assert reply[0]["id"] is None
    assert reply[0]["error"]["code"] == -32700
    data = reply[0]["error"]["data"]
    assert {"line", "column", "position", "reason"} <= set(data)
    assert data["line"] == 1


def test_call_with_invalid_request_object(server):
    reply = exchange(server, '{"jsonrpc": "2.0", "method": 1, "params": "bar"}')
    assert [r["error"]["code"] for r in reply] == [-32600]
    assert reply[0]["id"] is None


def test_batch_with_invalid_json(server):
    reply = exchange(
        server,
        '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]')
    assert len(reply) == 1 and isinstance(reply[0], dict)
    assert reply[0]["error"]["code"] == -32700 and reply[0]["id"] is None


def test_empty_batch_is_one_invalid_request(server):
    reply = exchange(server, "[]")
    assert len(reply) == 1 and isinstance(reply[0], dict)
    assert reply[0]["error"]["code"] == -32600 and reply[0]["id"] is None


def test_invalid_batch_of_one(server):
    reply = exchange(server, "[1]")
    assert len(reply) == 1 and isinstance(reply[0], list)
    assert [(r["id"], r["error"]["code"]) for r in reply[0]] == [(None, -32600)]


def test_invalid_batch_of_three(server):
    reply = exchange(server, "[1,2,3]")
    assert [(r["id"], r["error"]["code"]) for r in reply[0]] == [(None, -32600)] * 3


def test_mixed_batch(server):
    batch = [
        {"jsonrpc": "2.0", "method": "store/list", "id": "1"},
        {"jsonrpc": "2.0", "method": "dispatch", "params": {"store": "nowhere", "action": {"type": "x"}}},
        {"jsonrpc": "2.0", "method": "features/list", "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "store/list", "id": "9"},
    ]
    reply = exchange(server, json.dumps(batch))
    assert len(reply) == 1
    responses = reply[0]
    assert [r["id"] for r in responses] == ["1", "2", None, "5", "9"]
    assert "stores" in responses[0]["result"] and "features" in responses[1]["result"]
    assert responses[2]["error"]["code"] == -32600
    assert responses[3]["error"]["code"] == -32601
    assert "stores" in responses[4]["result"]


def test_batch_of_only_notifications_gets_no_line(server):
    batch = [
        {"jsonrpc": "2.0", "method": "store/list"},
        {"jsonrpc": "2.0", "method": "no/such/method"},
    ]
    assert exchange(server, json.dumps(batch)) == []


def test_ids_are_echoed_exactly(server):
    for index, id in enumerate(["abc", 7, -3, 1.5, 12345678901234, None, "ünïcode ✓", ""]):
        reply = exchange(server, json.dumps({"jsonrpc": "2.0", "id": id, "method": "store/list"}), index)
        assert len(reply) == 1 and reply[0]["id"] == id and type(reply[0]["id"]) is type(id)


def test_invalid_ids_are_invalid_requests(server):
    for index, id in enumerate([[1], {"a": 1}, True]):
        reply = exchange(server, json.dumps({"jsonrpc": "2.0", "id": id, "method": "store/list"}), index)
        assert reply[0]["error"]["code"] == -32600 and reply[0]["id"] is None


def test_a_request_without_jsonrpc_member(server):
    reply = exchange(server, '{"id": 4, "method": "store/list"}')
    assert reply[0]["id"] == 4 and reply[0]["error"]["code"] == -32600


# Bad input: each gets its error and the server keeps serving.

def test_oversize_line_is_answered_and_not_held_in_memory(spawn):
    client = spawn("--max-message-bytes", "4096")
    size = 64 << 20
    start = len(client.messages)
    client.send_bytes(b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"pad":"' + b"a" * size + b'"}}\n')
    probe(client, "after")
    reply = replies_until_probe(client, "after", start)
    assert len(reply) == 1
    error = reply[0]["error"]
    # Answered to the request its first bytes name, so the client waiting on id 1 hears.
    assert reply[0]["id"] == 1 and error["code"] == -32600
    assert error["data"]["limit"] == 4096 and error["data"]["size"] > size
    # The 64 MiB line was never held: the peak resident size stays far below it.
    with open(f"/proc/{client.process.pid}/status") as status:
        peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    assert peak_kb < 48 * 1024, f"peak RSS {peak_kb} kB"


@pytest.mark.parametrize("head, expected", [
    (b'{"jsonrpc":"2.0","id":"open-7","method":"store/open","params":{"state":"', "open-7"),
    (b'{ "method" : "x" , "jsonrpc":"2.0", "id" : -12 , "params":["', -12),
    (b'{"jsonrpc":"2.0","method":"x","params":{"id":5,"pad":"', None),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"x","params":["', None),
    (b'["', None),
], ids=["string-id", "spaced-negative-id", "id-only-inside-params", "fraction", "batch"])
def test_an_oversize_request_is_answered_with_the_id_its_head_names(spawn, head, expected):
    client = spawn("--max-message-bytes", "1024")
    start = len(client.messages)
    client.send_bytes(head + b"a" * 5000 + b'"]}}\n')
    probe(client, "after")
    reply = replies_until_probe(client, "after", start)
    assert len(reply) == 1 and reply[0]["error"]["code"] == -32600
    assert reply[0]["id"] == expected


def test_a_client_waiting_on_an_oversize_request_gets_its_error(spawn):
    from stateserver import RPCError
    client = spawn("--max-message-bytes", "1024")
    with pytest.raises(RPCError) as refused:
        client.request("store/open", {"feature": "notes", "state": {"pad": "a" * 5000}},
                       timeout=10)
    assert refused.value.code == -32600 and refused.value.data["limit"] == 1024
    assert "--max-message-bytes" in refused.value.data["hint"]


def test_default_limit_is_16_mib(server):
    result = server.request("initialize")
    assert result["capabilities"]["maxMessageBytes"] == 16 << 20


@pytest.mark.parametrize("line", [
    b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}',
    b'{"jsonrpc":"2.0","id":1,"method":"store/list"}\x00',
    b"[" * 100_000,
    b'{"jsonrpc":"2.0","id":1,"method":"store/list",}',
], ids=["invalid-utf8", "raw-nul", "100000-nested-arrays", "trailing-comma"])
def test_malformed_lines_are_parse_errors(server, line):
    reply = exchange(server, line)
    assert len(reply) == 1 and reply[0]["error"]["code"] == -32700 and reply[0]["id"] is None


def test_empty_and_crlf_lines(server):
    start = len(server.messages)
    server.send_bytes(b'\n\r\n   \n{"jsonrpc":"2.0","id":"crlf","method":"store/list"}\r\n')
    probe(server, "blank")
    reply = replies_until_probe(server, "blank", start)
    assert [r["id"] for r in reply] == ["crlf"] and "result" in reply[0]


def test_crlf_ending_does_not_count_toward_max_message_bytes(spawn):
    client = spawn("--max-message-bytes", "200")
    head = b'{"jsonrpc":"2.0","id":"%s","method":"store/list","params":{"pad":"'
    tail = b'"}}'

    def line(id, size):
        prefix = head % id.encode()
        return prefix + b"a" * (size - len(prefix) - len(tail)) + tail

    start = len(client.messages)
    client.send_bytes(line("lf", 200) + b"\n" + line("crlf", 200) + b"\r\n" + line("big", 201) + b"\r\n")
    probe(client, "limit")
    reply = replies_until_probe(client, "limit", start)
    assert [r["id"] for r in reply] == ["lf", "crlf", "big"]
    assert "result" in reply[0] and "result" in reply[1]
    assert reply[2]["error"]["code"] == -32600 and reply[2]["error"]["data"]["size"] == 201


def test_batch_of_ten_thousand(server):
    batch = [{"jsonrpc": "2.0", "id": i, "method": "store/list"} for i in range(10_000)]
    reply = exchange(server, json.dumps(batch))
    assert len(reply) == 1
    assert [r["id"] for r in reply[0]] == list(range(10_000))
    assert all("result" in r for r in reply[0])


def test_duplicate_keys_are_an_invalid_request(server):
    reply = exchange(server, '{"jsonrpc":"2.0","id":1,"id":2,"method":"store/list"}')
    error = reply[0]["error"]
    assert error["code"] == -32600 and "duplicate key" in error["message"]
    assert reply[0]["id"] is None


def test_unknown_method_and_unknown_store(server):
    reply = exchange(server, '{"jsonrpc":"2.0","id":1,"method":"store/lst"}')
    assert reply[0]["error"]["code"] == -32601 and reply[0]["error"]["data"]["method"] == "store/lst"
    with pytest.raises(Exception) as raised:
        server.dispatch("no-such-store", {"type": "increment"})
    assert raised.value.code == -32001


@pytest.mark.parametrize("method,params,pointer", [
    ("dispatch", {"store": 5, "action": {"type": "increment"}}, "/store"),
    ("dispatch", {"action": {"type": "increment"}}, "/store"),
    ("dispatch", {"store": "s", "action": "increment"}, "/action"),
    ("dispatch", {"store": "s", "action": {"type": "increment"}, "wait": "later"}, "/wait"),
    ("state/get", {"store": "s", "path": "no-slash"}, "/path"),
    ("store/open", {"feature": 1}, "/feature"),
    ("store/open", {"feature": "f", "persist": "yes"}, "/persist"),
    ("store/open", {"feature": "f", "state": [1]}, "/state"),
    ("initialize", {"subscribe": "some"}, "/subscribe"),
    ("store/list", [1, 2], ""),
])
def test_wrong_field_types_name_the_field(server, method, params, pointer):
    reply = server.request_raw(method, params)
    error = reply["error"]
    assert error["code"] == -32602
    assert error["data"]["pointer"] == pointer
    assert error["data"]["reason"]


def test_failed_notification_is_not_answered(server):
    assert exchange(server, '{"jsonrpc":"2.0","method":"dispatch","params":{"store":1}}') == []


# JSONTestSuite, each file as one line.

def suite_files(testdata, prefix):
    folder = testdata / "json-test-suite" / "test_parsing"
    files = sorted(folder.glob(prefix + "*.json"))
    assert files, f"no {prefix} files in {folder}"
    return files


def is_blank(data):
    return data.strip(b" \t\r") == b""


def test_every_n_file_is_a_parse_error_or_invalid_request(spawn, testdata):
    client = spawn("--max-message-bytes", str(1 << 20))
    files = [f for f in suite_files(testdata, "n_") if b"\n" not in f.read_bytes()]
    assert len(files) > 150
    start = len(client.messages)
    for index, path in enumerate(files):
        client.send_bytes(path.read_bytes() + b"\n")
        probe(client, index)
    client.wait_for(lambda m: isinstance(m, dict) and m.get("id") == f"probe-{len(files) - 1}",
                    start=start)
    replies = client.messages[start:]
    for index, path in enumerate(files):
        data = path.read_bytes()
        position = next(i for i, m in enumerate(replies) if isinstance(m, dict) and m.get("id") == f"probe-{index}")
        before, replies = replies[:position], replies[position + 1:]
        if is_blank(data):
            # A blank line is accepted and ignored (docs/reference/protocol.md): no reply.
            assert before == [], path.name
            continue
        assert len(before) == 1, path.name
        reply = before[0]
        assert isinstance(reply, dict) and reply["id"] is None, path.name
        assert reply["error"]["code"] in (-32700, -32600), path.name


def test_no_y_file_is_a_parse_error(server, testdata):
    files = suite_files(testdata, "y_")
    start = len(server.messages)
    for index, path in enumerate(files):
        # A newline in valid JSON is whitespace: a space keeps the text valid and on one line.
        server.send_bytes(path.read_bytes().replace(b"\n", b" ") + b"\n")
        probe(server, index)
    server.wait_for(lambda m: isinstance(m, dict) and m.get("id") == f"probe-{len(files) - 1}",
                    start=start)
    replies = server.messages[start:]
    for index, path in enumerate(files):
        position = next(i for i, m in enumerate(replies) if isinstance(m, dict) and m.get("id") == f"probe-{index}")
        before, replies = replies[:position], replies[position + 1:]
        assert len(before) == 1, path.name
        answers = before[0] if isinstance(before[0], list) else [before[0]]
        codes = [a["error"]["code"] for a in answers]
        # None is a request (none has a "method"), but every one is read: -32600, never -32700
        # (a NUL in a key included, read again in Swift since jansson cannot hold it).
        assert -32700 not in codes, path.name
        assert all(code == -32600 for code in codes), (path.name, codes)


def test_client_lines_are_described_by_the_schema(protocol_schema):
    from conftest import line_validator

    validator = line_validator(protocol_schema, "clientLine")
    valid = [
        {"jsonrpc": "2.0", "id": 1, "method": "dispatch",
         "params": {"store": "cart", "action": {"type": "setQuantity", "id": "sku-7", "quantity": 2}}},
        {"jsonrpc": "2.0", "method": "dispatch", "params": {"store": "c", "action": {"type": "x"},
                                                            "wait": "settled"}},
        {"jsonrpc": "2.0", "id": "s", "method": "state/subscribe", "params": {"store": "c", "path": "/items/0"}},
        {"jsonrpc": "2.0", "id": None, "method": "store/open", "params": {"feature": "notes", "persist": True}},
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 3}},
        [{"jsonrpc": "2.0", "id": 1, "method": "store/list"}, {"jsonrpc": "2.0", "method": "shutdown"}],
    ]
    invalid = [
        [],
        {"jsonrpc": "1.0", "id": 1, "method": "store/list"},
        {"jsonrpc": "2.0", "id": 1, "method": "dispatch", "params": {"store": "c", "action": {}}},
        {"jsonrpc": "2.0", "id": 1, "method": "dispatch", "params": {"store": "c", "action": {"type": "x"},
                                                                     "wait": "never"}},
        {"jsonrpc": "2.0", "id": 1, "method": "state/get", "params": {"store": "c", "path": "items"}},
        {"jsonrpc": "2.0", "id": [1], "method": "store/list"},
    ]
    assert [m for m in valid if not validator.is_valid(m)] == []
    assert [m for m in invalid if validator.is_valid(m)] == []


def test_server_line_schema_rejects_what_the_server_must_never_write(protocol_schema):
    from conftest import line_validator

    validator = line_validator(protocol_schema)
    never = [
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": -32600, "message": "x"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid params", "data": {"reason": "r"}}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "made up"}},
        {"jsonrpc": "2.0", "method": "state/patch", "params": {"store": "c", "from": 0, "to": 1, "patch": []}},
        {"jsonrpc": "2.0", "method": "state/patch", "params": {"store": "c", "from": 0, "to": 1,
                                                               "patch": [{"op": "add", "path": "/a"}]}},
        {"jsonrpc": "2.0", "method": "store/event", "params": {"store": "c", "event": {"kind": "toast"}}},
        [],
    ]
    assert [m for m in never if validator.is_valid(m)] == []
