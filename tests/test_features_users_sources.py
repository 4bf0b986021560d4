"""users, end to end, from its three sources: a restart starts from the cache (even offline),
the fallback endpoint serves when the primary fails, and a remote edit racing a local rename
becomes a conflict that an action resolves. Driven through the `backend` store."""
import json

from features_support import REPLY_TIMEOUT, Server, expect_refused

OFFLINE = {"message": "You appear to be offline. Check your connection and try again.",
           "recoverable": True}


def dispatch_together(server, actions):
    """Dispatches `(store, action)` pairs in one write, each waiting until settled, and returns
    their results in order: the server reads them together, so their effects race."""
    ids = list(range(server.next_id, server.next_id + len(actions)))
    server.next_id += len(actions)
    lines = [json.dumps({"jsonrpc": "2.0", "id": id, "method": "dispatch",
                         "params": {"store": store, "action": action, "wait": "settled"}}) + "\n"
             for id, (store, action) in zip(ids, actions)]
    server.process.stdin.write("".join(lines).encode())
    server.process.stdin.flush()
    replies = {}
    while len(replies) < len(ids):
        line = server.lines.get(timeout=REPLY_TIMEOUT)
        assert line is not None, server.stderr
        reply = json.loads(line)
        if reply.get("id") in ids:
            assert "result" in reply, reply
            replies[reply["id"]] = reply["result"]
        elif "method" in reply:
            server.notifications.append(reply)
    return [replies[id] for id in ids]


def test_a_restart_starts_from_the_cache_even_offline_then_revalidates(tmp_path):
    with Server("--latency", "0", state_dir=tmp_path) as server:
        server.dispatch("users", {"type": "load"})
        first = server.state("users")
        assert first["source"] == "network" and len(first["users"]) == 50
        assert server.close() == 0

    # A time to live of 0: whatever the cache holds is stale from the start.
    with Server("--latency", "0", "--users-ttl", "0", state_dir=tmp_path) as server:
        view = server.state("users")
        assert view["source"] == "cache" and view["load"]["status"] == "loaded"
        assert view["load"]["isStale"] is True
        assert view["users"] == first["users"] and view["results"] == first["users"]
        assert view["load"]["lastUpdated"] == first["load"]["lastUpdated"]

        server.dispatch("backend", {"type": "setOnline", "online": False})
        server.dispatch("backend", {"type": "setFallbackOnline", "online": False})
        server.dispatch("users", {"type": "load"})
        view = server.state("users")
        assert view["load"]["status"] == "failed" and view["load"]["error"] == OFFLINE
        assert view["source"] == "cache" and view["users"] == first["users"]
        assert server.state("backend")["requests"] == {}

        server.dispatch("backend", {"type": "setOnline", "online": True})
        server.dispatch("users", {"type": "retry"})
        view = server.state("users")
        assert view["source"] == "network" and view["load"]["status"] == "loaded"
        assert view["load"]["isStale"] is False and view["load"]["error"] is None
        assert server.close() == 0

    # The default time to live: fetched a moment ago, so fresh. A load answers before the
    # (very slow) network does, with the cached list still shown while it revalidates.
    with Server("--latency", "60000", state_dir=tmp_path) as server:
        view = server.state("users")
        assert view["source"] == "cache" and view["load"]["isStale"] is False
        server.dispatch("users", {"type": "load"}, wait="reduced")
        view = server.state("users")
        assert view["load"]["status"] == "loading" and view["users"] == first["users"]
        server.dispatch("backend", {"type": "setLatency", "ms": 0})
        server.dispatch("users", {"type": "refresh"})  # cancels the slow load
        assert server.state("users")["source"] == "network"
        assert server.close() == 0


def test_the_fallback_serves_when_the_primary_fails_and_both_down_keeps_the_list():
    with Server("--latency", "0") as server:
        server.dispatch("backend", {"type": "setOnline", "online": False})
        server.dispatch("users", {"type": "load"})
        view = server.state("users")
        assert view["source"] == "fallback" and view["load"]["status"] == "loaded"
        assert len(view["users"]) == 50
        assert server.state("backend")["requests"] == {"listUsersFallback": 1}

        server.dispatch("backend", {"type": "setFallbackOnline", "online": False})
        server.dispatch("users", {"type": "refresh"})
        view = server.state("users")
        assert view["load"]["status"] == "failed" and view["load"]["error"] == OFFLINE
        assert view["load"]["isStale"] is True and len(view["users"]) == 50
        assert view["source"] == "fallback"

        # The primary answering but failing every call: its retries, then the fallback.
        server.dispatch("backend", {"type": "setOnline", "online": True})
        server.dispatch("backend", {"type": "setFailRate", "rate": 1})
        server.dispatch("backend", {"type": "setFallbackOnline", "online": True})
        server.dispatch("users", {"type": "retry"})
        view = server.state("users")
        assert view["source"] == "fallback" and view["load"]["isStale"] is False
        assert server.state("backend")["requests"] == {"listUsers": 4, "listUsersFallback": 2}

        server.dispatch("backend", {"type": "setFailRate", "rate": 0})
        server.dispatch("users", {"type": "refresh"})
        assert server.state("users")["source"] == "network"


def test_a_remote_edit_racing_a_local_rename_is_a_conflict_resolved_by_an_action(tmp_path):
    with Server("--latency", "0", state_dir=tmp_path) as server:
        server.dispatch("users", {"type": "load"})
        expect_refused(server, "users", {"type": "rename", "id": 42, "name": " "}, -32602,
                       "/action/name")
        # The rename is reduced first (made on version 1); whichever reaches the server first,
        # the other side has changed the user before the rename's reply is back (1 s away:
        # only an edit stalled for longer could arrive after it and be simply the newer copy).
        server.dispatch("backend", {"type": "setLatency", "ms": 1000})
        dispatch_together(server, [
            ("users", {"type": "rename", "id": 42, "name": "Quentin Local"}),
            ("backend", {"type": "remoteUserEdit", "id": 42, "name": "Quentin Remote"})])
        server.dispatch("backend", {"type": "setLatency", "ms": 0})
        view = server.state("users")
        [edit] = view["edits"]
        assert (edit["id"], edit["name"], edit["status"]) == (42, "Quentin Local", "conflict")
        assert edit["serverName"] == "Quentin Remote" and edit["serverVersion"] in (2, 3)
        assert view["users"][41]["name"] == "Quentin Local"  # nothing overwritten

        server.dispatch("users", {"type": "resolveConflict", "id": 42, "keep": "local"})
        view = server.state("users")
        assert view["edits"] == []
        assert view["users"][41]["name"] == "Quentin Local"
        assert view["users"][41]["version"] == edit["serverVersion"] + 1
        # The server agrees: a reload brings the same copy.
        server.dispatch("users", {"type": "refresh"})
        assert server.state("users")["users"][41] == view["users"][41]

        # Someone else's edit without a local one is simply the newer copy.
        server.dispatch("backend", {"type": "remoteUserEdit", "id": 7, "name": "Hiro Remote"})
        seven = server.state("users")["users"][6]
        assert (seven["name"], seven["version"]) == ("Hiro Remote", 2)
        assert server.close() == 0

    # The merged result is the cache the next run starts from.
    with Server("--latency", "0", state_dir=tmp_path) as server:
        view = server.state("users")
        assert view["source"] == "cache" and view["edits"] == []
        assert view["users"][41]["name"] == "Quentin Local"
        assert view["users"][6]["name"] == "Hiro Remote"


def test_a_rename_made_offline_is_kept_across_a_restart_and_sent(tmp_path):
    with Server("--latency", "0", state_dir=tmp_path) as server:
        server.dispatch("users", {"type": "load"})
        server.dispatch("backend", {"type": "setOnline", "online": False})
        server.dispatch("users", {"type": "rename", "id": 3, "name": "Carla Offline"})
        view = server.state("users")
        assert view["edits"] == [{"id": 3, "name": "Carla Offline", "baseVersion": 1,
                                  "status": "pending", "serverName": None,
                                  "serverVersion": None, "previousName": "Carla Okafor"}]
        assert view["users"][2]["name"] == "Carla Offline"
        assert server.close() == 0

    with Server("--latency", "0", state_dir=tmp_path) as server:
        assert server.state("users")["edits"][0]["status"] == "pending"
        server.dispatch("users", {"type": "load"})  # revalidates, and sends the edit
        view = server.state("users")
        assert view["edits"] == [] and view["source"] == "network"
        assert (view["users"][2]["name"], view["users"][2]["version"]) == ("Carla Offline", 2)
        assert server.state("backend")["requests"] == {"listUsers": 1, "renameUser": 1}
