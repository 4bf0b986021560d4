"""Issue 15: a refused action says what was expected in the wire's terms, with its pointer,
never in Swift's ("Cannot initialize Keep from invalid String value mine")."""
import pytest

from stateserver import RPCError

CASES = [
    ("notes", {"type": "resolveConflict", "id": "note-1", "keep": "mine"},
     "/action/keep", 'expected one of: local, server, found "mine"'),
    ("navigation", {"type": "push", "destination": {"screen": "nowhere"}},
     "/action/destination/screen", 'expected one of: userDetail, settings, found "nowhere"'),
    ("counter", {"type": "set", "value": "41"},
     "/action/value", "expected an integer, found a string"),
    ("notes", {"type": "resolveConflict", "id": "note-1"},
     "/action/keep", "required field 'keep' is missing; expected one of: local, server"),
    ("navigation", {"type": "push", "destination": {"screen": "userDetail", "userId": True}},
     "/action/destination/userId", "expected an integer, found a boolean"),
]


@pytest.mark.parametrize("store,action,pointer,reason", CASES)
def test_a_refusal_names_what_the_wire_expected(spawn, store, action, pointer, reason):
    client = spawn()
    with pytest.raises(RPCError) as refused:
        client.dispatch(store, action)
    assert refused.value.code == -32602
    assert refused.value.data == {"pointer": pointer, "reason": reason}
