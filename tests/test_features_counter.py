"""counter, end to end: every action, and incrementLater awaited with wait: settled."""
from features_support import Server, expect_refused


def test_counter_actions_and_delayed_increment():
    with Server() as server:
        assert server.state("counter") == {"count": 0}
        server.dispatch("counter", {"type": "increment"})
        server.dispatch("counter", {"type": "increment"})
        server.dispatch("counter", {"type": "decrement"})
        assert server.state("counter") == {"count": 1}
        server.dispatch("counter", {"type": "set", "value": 41})
        result = server.dispatch("counter", {"type": "incrementLater", "afterMs": 20})
        assert server.state("counter") == {"count": 42}
        assert result["version"] == server.version("counter")
        server.dispatch("counter", {"type": "reset"})
        assert server.state("counter") == {"count": 0}
        expect_refused(server, "counter", {"type": "incrementLater", "afterMs": -5},
                       -32602, "/action/afterMs")
        assert server.close() == 0
