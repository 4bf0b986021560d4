"""initialize's protocolVersion: an unknown one answers the versions supported, and "1" as a
string is refused with words that say an integer is expected."""
import pytest

from stateserver.errors import RPCError


def test_an_unknown_version_answers_the_versions_supported(stateserver):
    with pytest.raises(RPCError) as refused:
        stateserver.request("initialize", {"protocolVersion": 2})
    assert refused.value.data["pointer"] == "/protocolVersion"
    assert refused.value.data["supported"] == [1]


def test_the_version_as_a_string_is_refused_saying_an_integer_is_expected(stateserver):
    with pytest.raises(RPCError) as refused:
        stateserver.request("initialize", {"protocolVersion": "1"})
    assert refused.value.data["pointer"] == "/protocolVersion"
    assert "integer" in refused.value.data["reason"]
    assert stateserver.request("initialize", {"protocolVersion": 1})["protocolVersion"] == 1
