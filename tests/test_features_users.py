"""users, end to end: load, debounced search, failures with retries, select and delete."""
from features_support import Server


def test_load_search_select_and_delete():
    with Server("--latency", "0") as server:
        server.dispatch("users", {"type": "load"})
        view = server.state("users")
        assert view["load"]["status"] == "loaded"
        assert view["load"]["error"] is None and view["load"]["isStale"] is False
        assert len(view["users"]) == 50 and view["results"] == view["users"]

        # Typing fast: only the last query reaches the backend. (Sent together: one request at
        # a time, a loaded machine could let the 300 ms debounce run out between keystrokes.)
        server.dispatch_at_once("users", [{"type": "search", "query": "c"},
                                          {"type": "search", "query": "ca"},
                                          {"type": "search", "query": "carla"}])
        view = server.state("users")
        assert view["searching"] is False
        assert view["results"] and all("Carla" in u["name"] for u in view["results"])
        assert server.state("backend")["requests"].get("searchUsers") == 1

        server.dispatch("users", {"type": "search", "query": ""})
        assert len(server.state("users")["results"]) == 50

        server.dispatch("users", {"type": "select", "id": 42})
        assert server.state("users")["selected"]["id"] == 42
        server.dispatch("users", {"type": "select", "id": 999})
        assert server.state("users")["selected"] is None

        server.dispatch("users", {"type": "select", "id": 3})
        server.dispatch("users", {"type": "delete", "id": 3})
        view = server.state("users")
        assert 3 not in [u["id"] for u in view["users"]]
        assert 3 not in [u["id"] for u in view["results"]]
        assert view["selectedId"] is None and view["selected"] is None
        assert server.state("backend")["requests"].get("deleteUser") == 1


def test_a_failing_backend_is_retried_then_fails_recoverably_keeping_stale_users():
    with Server("--latency", "0") as server:
        server.dispatch("users", {"type": "load"})
        server.dispatch("backend", {"type": "setFailRate", "rate": 1})
        server.dispatch("backend", {"type": "setFallbackFailRate", "rate": 1})  # no way out
        server.dispatch("users", {"type": "refresh"})
        view = server.state("users")
        assert view["load"]["status"] == "failed"
        assert view["load"]["error"] == {
            "message": "Could not load users. Please try again.", "recoverable": True}
        assert view["load"]["isStale"] is True and len(view["users"]) == 50
        assert server.state("backend")["requests"]["listUsers"] == 1 + 4
        assert server.state("backend")["requests"]["listUsersFallback"] == 1

        server.dispatch("backend", {"type": "setFailRate", "rate": 0})
        server.dispatch("users", {"type": "retry"})
        view = server.state("users")
        assert view["load"]["status"] == "loaded" and view["load"]["isStale"] is False


def test_a_rename_the_server_fails_rolls_back_and_shows_its_error():
    with Server("--latency", "0") as server:
        server.dispatch("users", {"type": "load"})
        before = server.state("users")["users"][41]["name"]
        server.dispatch("backend", {"type": "setFailRate", "rate": 1})
        server.dispatch("users", {"type": "rename", "id": 42, "name": "Quentin New"})
        view = server.state("users")
        assert view["users"][41]["name"] == before and view["edits"] == []
        assert view["renameError"] == "Could not rename the user. Please try again."
        assert server.state("backend")["requests"]["renameUser"] == 1 + 3
