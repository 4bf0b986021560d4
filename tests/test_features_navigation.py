"""navigation, end to end: a stack as state and deep links, resolved against the `users`
store (issue 30: it read its own copy of the users, so `push userDetail 2` after `users` had
loaded answered "User 2 does not exist")."""
from features_support import Server, expect_refused


def push_user(server, user_id):
    server.dispatch("navigation", {"type": "push",
                                   "destination": {"screen": "userDetail", "userId": user_id}})


def test_push_user_detail_resolves_against_the_users_store():
    with Server("--latency", "0") as server:
        push_user(server, 2)  # nothing loaded yet
        assert server.events("navigation") == [{"type": "toast", "message": "User 2 does not exist."}]

        server.dispatch("users", {"type": "load"})
        push_user(server, 2)
        view = server.state("navigation")
        assert view["path"] == [{"screen": "userDetail", "userId": 2}]
        assert view["shownUser"] == server.state("users")["users"][1]
        assert view["usersVersion"] == server.version("users")
        assert server.events("navigation") == []

        push_user(server, 999)
        assert server.events("navigation") == [
            {"type": "toast", "message": "User 999 does not exist."}]
        assert server.state("navigation")["path"] == [{"screen": "userDetail", "userId": 2}]


def test_a_rename_in_users_shows_in_what_navigation_reads():
    with Server("--latency", "0") as server:
        server.dispatch("users", {"type": "load"})
        server.dispatch("users", {"type": "rename", "id": 2, "name": "Zed"})
        push_user(server, 2)
        view = server.state("navigation")
        assert view["shownUser"]["name"] == "Zed"
        assert view["usersVersion"] == server.version("users")

        server.dispatch("users", {"type": "rename", "id": 2, "name": "Zoe"})
        server.dispatch("navigation", {"type": "push", "destination": {"screen": "settings"}})
        assert server.state("navigation")["shownUser"] is None
        server.dispatch("navigation", {"type": "pop"})  # uncovered: read again
        view = server.state("navigation")
        assert view["shownUser"]["name"] == "Zoe"
        assert view["usersVersion"] == server.version("users")

        server.dispatch("users", {"type": "delete", "id": 3})
        push_user(server, 3)
        assert server.events("navigation") == [
            {"type": "toast", "message": "User 3 does not exist."}]


def test_deep_links_push_pop_and_refusals():
    with Server("--latency", "0") as server:
        server.dispatch("navigation", {"type": "openURL", "url": "app://users/42"})
        assert server.events("navigation") == [{
            "type": "toast", "message": "Cannot open user 42: the users are not loaded yet."}]
        server.dispatch("users", {"type": "load"})
        server.dispatch("navigation", {"type": "openURL", "url": "app://users/42"})
        assert server.state("navigation")["path"] == [{"screen": "userDetail", "userId": 42}]

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
        expect_refused(server, "navigation",
                       {"type": "push", "destination": {"screen": "moon"}}, -32602)


def test_a_closed_users_store_is_said_so_and_a_reopened_one_is_read():
    with Server("--latency", "0") as server:
        server.request("store/close", {"store": "users"})
        server.dispatch("navigation", {"type": "openURL", "url": "app://users/1"})
        assert server.events("navigation") == [{
            "type": "toast", "message": "Cannot open user 1: the users store is not open."}]
        server.request("store/open", {"feature": "users", "store": "users"})
        server.dispatch("users", {"type": "load"})
        push_user(server, 1)
        assert server.state("navigation")["path"] == [{"screen": "userDetail", "userId": 1}]
