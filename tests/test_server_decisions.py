"""The small points of issue 10, item 9, each decided (docs/reference/protocol.md) and held here."""
import json

import pytest

from stateserver.client import RPCError


def refusal(server, method, params):
    with pytest.raises(RPCError) as refused:
        server.request(method, params)
    return {"code": refused.value.code, "message": refused.value.message,
            "data": refused.value.data}


def test_an_action_field_the_schema_does_not_have_is_refused_at_its_pointer(server):
    error = refusal(server, "dispatch", {"store": "counter",
                                         "action": {"type": "increment", "by": 2}})
    assert error["code"] == -32602 and error["data"]["pointer"] == "/action/by"
    assert "unknown field" in error["data"]["reason"]
    assert server.request("state/get", {"store": "counter"})["version"] == 0


@pytest.mark.parametrize("store,action", [
    ("counter", {"type": "increment"}),
    ("cart", {"type": "add", "id": "a", "name": "A", "price": 5}),
    ("notes", {"type": "add", "text": "t"}),
    ("backend", {"type": "setFailRate", "rate": 0.5}),
])
def test_schema_and_server_agree_on_extra_members(server, store, action):
    features = {f["name"]: f for f in server.request("features/list")["features"]}
    schema = features[store]["schema"]["actions"][action["type"]]
    assert schema["additionalProperties"] is False
    error = refusal(server, "dispatch", {"store": store, "action": {**action, "extra": [1]}})
    assert error["code"] == -32602 and error["data"]["pointer"] == "/action/extra"
    server.dispatch(store, action)  # the same action without it is accepted


def test_an_unsupported_protocol_version_is_refused_with_the_supported_one(server):
    error = refusal(server, "initialize", {"protocolVersion": 99})
    assert error["code"] == -32602 and error["data"]["pointer"] == "/protocolVersion"
    assert error["data"]["supported"] == [1]
    assert server.request("initialize", {"protocolVersion": 1})["protocolVersion"] == 1


def test_a_second_initialize_re_chooses_the_subscriptions(server):
    first = server.request("initialize", {"subscribe": "none"})
    server.dispatch("counter", {"type": "increment"})
    second = server.request("initialize", {"subscribe": "all"})
    assert second["protocolVersion"] == first["protocolVersion"] == 1
    start = len(server.messages)
    server.dispatch("counter", {"type": "increment"})
    patches = [m for m in server.messages[start:]
               if isinstance(m, dict) and m.get("method") == "state/patch"]
    assert patches and patches[0]["params"]["from"] == 1 and patches[0]["params"]["to"] == 2


def test_store_open_refuses_a_state_an_action_could_not_make(server):
    error = refusal(server, "store/open", {"feature": "cart", "state": {"items": [
        {"id": "a", "name": "x", "price": -100, "quantity": -5}]}})
    assert error["code"] == -32602 and error["data"]["pointer"] == "/state/items/0/price"
    error = refusal(server, "store/open", {"feature": "backend", "state": {"failRate": 5}})
    assert error["data"]["pointer"] == "/state/failRate"
    error = refusal(server, "store/open", {"feature": "backend", "state": {"latencyMs": -5}})
    assert error["data"]["pointer"] == "/state/latencyMs"
    assert [s["store"] for s in server.request("store/list")["stores"]].count("cart-1") == 0
