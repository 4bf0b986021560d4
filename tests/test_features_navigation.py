"""navigation, end to end: a stack as state, deep links, and the users child."""
from features_support import Server, expect_refused


def test_deep_link_push_pop_and_child_actions():
    with Server("--latency", "0") as server:
        server.dispatch("navigation", {"type": "openURL", "url": "app://users/42"})
        view = server.state("navigation")
        assert view["path"] == [{"screen": "userDetail", "userId": 42}]
        assert view["users"]["load"]["status"] == "loaded"
        assert view["users"]["selected"]["id"] == 42

        before = server.state("navigation")["path"]
        for url in ["app://users/999", "app://nowhere", "not a url", "app://users/abc"]:
            server.dispatch("navigation", {"type": "openURL", "url": url})
            assert server.state("navigation")["path"] == before
        toasts = server.events("navigation")
        assert len(toasts) == 4 and all(t["type"] == "toast" for t in toasts)

        server.dispatch("navigation", {"type": "push", "destination": {"screen": "settings"}})
        assert server.state("navigation")["path"][-1] == {"screen": "settings"}
        server.dispatch("navigation", {"type": "pop"})
        assert len(server.state("navigation")["path"]) == 1
        server.dispatch("navigation", {"type": "popToRoot"})
        assert server.state("navigation")["path"] == []

        server.dispatch("navigation", {"type": "users", "action": {"type": "select", "id": 7}})
        assert server.state("navigation")["users"]["selectedId"] == 7
        expect_refused(server, "navigation",
                       {"type": "users", "action": {"type": "loaded", "users": []}}, -32003,
                       "/action/action/type")
        expect_refused(server, "navigation",
                       {"type": "push", "destination": {"screen": "moon"}}, -32602)


def test_deleting_the_shown_user_pops_its_screen():
    with Server("--latency", "0") as server:
        server.dispatch("navigation", {"type": "openURL", "url": "app://users/5"})
        server.dispatch("navigation", {"type": "users", "action": {"type": "delete", "id": 5}})
        view = server.state("navigation")
        assert view["path"] == [] and view["users"]["selected"] is None
