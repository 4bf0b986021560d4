"""backend, end to end: its settings are steerable and its request counts visible."""
from features_support import Server, expect_refused


def test_backend_settings_follow_the_flags_and_the_actions():
    with Server("--latency", "5", "--fail-rate", "0.25", "--seed", "7") as server:
        assert server.state("backend") == {
            "online": True, "latencyMs": 5, "failRate": 0.25,
            "fallback": {"online": True, "failRate": 0.25}, "requests": {}}
        server.dispatch("backend", {"type": "setOnline", "online": False})
        server.dispatch("backend", {"type": "setLatency", "ms": 0})
        server.dispatch("backend", {"type": "setFailRate", "rate": 0})
        view = server.state("backend")
        assert (view["online"], view["latencyMs"], view["failRate"]) == (False, 0, 0)
        expect_refused(server, "backend", {"type": "setLatency", "ms": -1}, -32602, "/action/ms")
        expect_refused(server, "backend", {"type": "setFailRate", "rate": 2}, -32602,
                       "/action/rate")
        expect_refused(server, "backend", {"type": "statusChanged"}, -32003)

        server.dispatch("backend", {"type": "setFallbackOnline", "online": False})
        server.dispatch("backend", {"type": "setFallbackFailRate", "rate": 0.5})
        view = server.state("backend")
        assert view["fallback"] == {"online": False, "failRate": 0.5}
        assert view["online"] is False and view["failRate"] == 0  # the primary's own switches
        expect_refused(server, "backend", {"type": "setFallbackFailRate", "rate": -0.1},
                       -32602, "/action/rate")
        expect_refused(server, "backend", {"type": "remoteUserEdit", "id": 1, "name": " "},
                       -32602, "/action/name")


def test_backend_counts_requests_per_endpoint():
    with Server("--latency", "0") as server:
        server.dispatch("users", {"type": "load"})
        server.dispatch("profile", {"type": "edit", "name": "Ada"})
        server.dispatch("profile", {"type": "save"})
        assert server.state("backend")["requests"] == {"listUsers": 1, "saveProfile": 1}


def test_remote_edit_of_an_unknown_note_toasts():
    with Server("--latency", "0") as server:
        server.dispatch("backend", {"type": "remoteEdit", "noteId": "nope", "text": "x"})
        assert server.events("backend") == [
            {"type": "toast", "message": "The server has no note nope."}]
        server.dispatch("backend", {"type": "remoteUserEdit", "id": 999, "name": "x"})
        assert server.events("backend") == [
            {"type": "toast", "message": "The server has no user 999."}]
