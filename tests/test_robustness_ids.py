"""Every valid JSON-RPC request gets exactly one response with its own id (issue 10, item 5):
members that jansson refuses in otherwise well-formed JSON (a NUL in a key, a repeated key, an
integer beyond 64 bits, a number beyond a double) never cost a request its id."""
import json

import pytest

from test_server_jsonrpc import exchange as exchange_all


def exchange(client, line):
    """The responses (not notifications) to `line`."""
    return [m for m in exchange_all(client, line) if isinstance(m, list) or "method" not in m]


def request(rid, method="dispatch", params='{"store":"counter","action":{"type":"increment"}}'):
    return '{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}' % (json.dumps(rid), method,
                                                                    params)


def test_a_nul_in_a_key_is_an_ordinary_member(server):
    # JSONTestSuite's y_object_escaped_null_in_key: the action's extra member is refused by name.
    reply = exchange(server, request(1, params='{"store":"counter","action":'
                                               '{"type":"increment","a\\u0000b":1}}'))
    assert [r["id"] for r in reply] == [1]
    reply = exchange(server, '{"jsonrpc":"2.0","id":"k","method":"state/get",'
                             '"params":{"store":"counter","path":"/count"},"x\\u0000":1}')
    assert reply[0]["id"] == "k" and reply[0]["result"]["store"] == "counter"


@pytest.mark.parametrize("number", ["9223372036854775808", "-9223372036854775809",
                                    "1" * 400, "1e400", "-1e400"])
def test_a_number_beyond_range_in_params_is_refused_with_the_id_and_its_pointer(server, number):
    line = request(7, params='{"store":"counter","action":{"type":"set","value":%s}}' % number)
    reply = exchange(server, line)
    assert len(reply) == 1 and reply[0]["id"] == 7
    error = reply[0]["error"]
    assert error["code"] == -32602
    assert error["data"]["pointer"] == "/action/value"
    assert number[:20] in error["data"]["reason"]


@pytest.mark.parametrize("params,pointer", [
    ('{"store":"counter","action":{"type":"increment","type":"decrement"}}', "/params/action/type"),
    ('{"store":"counter","store":"cart","action":{"type":"increment"}}', "/params/store"),
])
def test_a_repeated_key_anywhere_is_refused_with_the_id(server, params, pointer):
    reply = exchange(server, request("dup", params=params))
    assert len(reply) == 1 and reply[0]["id"] == "dup"
    error = reply[0]["error"]
    assert error["code"] == -32600 and "duplicate key" in error["message"]
    assert error["data"]["pointer"] == pointer
    # Nothing was dispatched.
    assert server.request("state/get", {"store": "counter"})["version"] == 0


def test_a_repeated_member_of_the_envelope_keeps_the_id(server):
    reply = exchange(server, '{"jsonrpc":"2.0","id":3,"method":"store/list","method":"x"}')
    assert reply[0]["id"] == 3 and reply[0]["error"]["code"] == -32600
    assert reply[0]["error"]["data"]["pointer"] == "/method"


def test_an_unreadable_id_is_answered_with_id_null(server):
    for line in ['{"jsonrpc":"2.0","id":1,"id":2,"method":"store/list"}',
                 '{"jsonrpc":"2.0","id":99999999999999999999,"method":"store/list"}',
                 '{"jsonrpc":"2.0","id":1e400,"method":"store/list"}']:
        reply = exchange(server, line)
        assert len(reply) == 1 and reply[0]["id"] is None, line
        assert reply[0]["error"]["code"] == -32600
        assert reply[0]["error"]["data"]["pointer"] == "/id"


def test_a_batch_answers_every_element_and_refuses_only_the_bad_ones(server):
    line = "[%s,%s,%s,1e400]" % (
        request(1, "store/list", "{}"),
        request(2, params='{"store":"counter","action":{"type":"set","value":1e999}}'),
        '{"jsonrpc":"2.0","id":3,"method":"store/list","params":{"a":1,"a":1}}')
    reply = exchange(server, line)
    assert len(reply) == 1
    answers = reply[0]
    assert [a["id"] for a in answers] == [1, 2, 3, None]
    assert "result" in answers[0]
    assert answers[1]["error"]["code"] == -32602
    assert answers[1]["error"]["data"]["pointer"] == "/action/value"
    assert answers[2]["error"]["code"] == -32600
    assert answers[2]["error"]["data"]["pointer"] == "/params/a"
    assert answers[3]["error"]["code"] == -32600


def test_a_refused_member_in_a_notification_gets_no_reply(server):
    reply = exchange(server, '{"jsonrpc":"2.0","method":"dispatch","params":{"store":"counter",'
                             '"action":{"type":"set","value":1e400}}}')
    assert reply == []


def test_a_refused_member_deep_inside_the_nesting_limit_is_still_located(server):
    depth = 2040
    path = "[" * depth + '{"a":1,"a":2}' + "]" * depth
    reply = exchange(server, request("deep", "state/get", '{"store":"counter","path":%s}' % path))
    assert reply[0]["id"] == "deep" and reply[0]["error"]["code"] == -32600
    assert reply[0]["error"]["data"]["pointer"] == "/params/path" + "/0" * depth + "/a"


def test_a_syntax_error_after_a_refused_member_is_a_parse_error(server):
    reply = exchange(server, '{"jsonrpc":"2.0","id":5,"method":"store/list","a":1,"a":2,}')
    assert reply[0]["id"] is None and reply[0]["error"]["code"] == -32700
