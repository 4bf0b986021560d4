"""Progress of long effects (`$/progress`) and the capabilities `initialize` agrees on, through
the Python clients as a user drives them: the notes sync reports one unit per change, on the
virtual clock (each upload takes the backend's 50 ms of latency, moved by `clock/advance`)."""
import asyncio

import pytest

from stateserver import AsyncClient, RPCError
from test_server_attach import attach, listening, sock_dir  # noqa: F401 - fixtures

LATENCY_MS = 50  # the backend's default latency: one upload


def begin(done, total, message):
    return {"kind": "begin", "done": done, "total": total, "message": message}


def report(done, total, message):
    return {"kind": "report", "done": done, "total": total, "message": message}


def end(done, total, cancelled=False):
    return {"kind": "end", "done": done, "total": total, "cancelled": cancelled}


def progress_messages(client):
    return [m for m in client.messages if isinstance(m, dict) and m.get("method") == "$/progress"]


def add_notes(client, count):
    for number in range(count):
        client.dispatch("notes", {"type": "add", "text": f"note {number}"})


def notes_sync(client):
    return client.request("state/get", {"store": "notes", "path": "/sync"})["state"]


def test_a_sync_reports_begin_each_change_and_end(spawn):
    client = spawn("--clock", "virtual")
    assert client.initialize(subscribe="none")["capabilities"]["progress"] is True
    add_notes(client, 3)
    seen = []
    client.dispatch("notes", {"type": "sync"}, on_progress=seen.append)
    for _ in range(3):
        client.advance(LATENCY_MS)
    assert seen == [
        begin(0, 3, "0 of 3 changes done"),
        report(1, 3, "1 of 3 changes done"),
        report(2, 3, "2 of 3 changes done"),
        report(3, 3, "3 of 3 changes done"),
        end(3, 3),
    ]
    assert notes_sync(client)["status"] == "idle"
    # Each notification names the token the dispatch gave, and the end is the last of them.
    tokens = {m["params"]["token"] for m in progress_messages(client)}
    assert len(tokens) == 1


def test_each_report_follows_the_patch_of_the_upload_it_counts(spawn):
    client = spawn("--clock", "virtual")
    client.initialize()
    add_notes(client, 2)
    client.dispatch("notes", {"type": "sync"}, on_progress=lambda value: None)
    client.advance(LATENCY_MS)
    kinds = [(m.get("method"), m["params"].get("value", {}).get("kind"))
             for m in client.messages if isinstance(m, dict) and "method" in m
             and m["params"].get("store", "notes") == "notes"]
    first_upload = kinds.index(("state/patch", None), kinds.index(("$/progress", "begin")) + 1)
    assert kinds[first_upload + 1] == ("$/progress", "report")


def test_cancelling_the_request_cancels_the_sync_and_ends_its_progress(spawn):
    client = spawn("--clock", "virtual")
    client.initialize(subscribe="none")
    add_notes(client, 3)
    seen = []
    client.dispatch("notes", {"type": "sync"}, id="sync-1", on_progress=seen.append)
    client.advance(LATENCY_MS)
    assert [value["kind"] for value in seen] == ["begin", "report"]
    client.cancel("sync-1")
    client.wait_for(lambda m: isinstance(m, dict) and m.get("method") == "$/progress"
                    and m["params"]["value"]["kind"] == "end")
    assert seen[-1] == end(1, 3, cancelled=True)
    # The feature put its state right (onCancel): no longer syncing, two notes still pending,
    # and moving time uploads nothing more.
    client.advance(10 * LATENCY_MS)
    sync = notes_sync(client)
    assert sync["status"] == "idle" and sync["pending"] == 2
    assert "cancelled" in sync["message"]
    uploads = client.request("state/get", {"store": "backend"})["state"]["requests"]["uploadNote"]
    assert uploads == 2  # the one that finished, and the one cancelled on its way
    assert len(seen) == 3


def test_a_client_that_did_not_say_it_speaks_progress_gets_none(spawn):
    client = spawn("--clock", "virtual")
    agreed = client.initialize(capabilities={"batch": True}, subscribe="none")["capabilities"]
    assert agreed["progress"] is False
    add_notes(client, 2)
    client.request("dispatch", {"store": "notes", "action": {"type": "sync"},
                                "progressToken": "mine"})
    client.advance(2 * LATENCY_MS)
    assert notes_sync(client)["status"] == "idle"  # the sync ran to its end
    assert progress_messages(client) == []
    # The client knows: asking for progress the server will never send is an error at once.
    with pytest.raises(ValueError, match="initialize"):
        client.dispatch("notes", {"type": "sync"}, on_progress=print)


def test_without_initialize_no_progress_is_sent(spawn):
    client = spawn("--clock", "virtual")
    add_notes(client, 1)
    client.request("dispatch", {"store": "notes", "action": {"type": "sync"},
                                "progressToken": 1})
    client.advance(LATENCY_MS)
    assert progress_messages(client) == []


def test_a_progress_token_must_be_a_string_or_an_integer(spawn):
    client = spawn()
    client.initialize()
    with pytest.raises(RPCError) as refused:
        client.request("dispatch", {"store": "notes", "action": {"type": "sync"},
                                    "progressToken": {"id": 1}})
    assert refused.value.data["pointer"] == "/progressToken"
    assert "string or an integer" in refused.value.data["reason"]
    assert notes_sync(client)["status"] == "idle"  # refused before anything changed


def test_initialize_answers_what_both_speak(spawn):
    client = spawn()
    agreed = client.initialize()["capabilities"]
    assert agreed["progress"] is True and agreed["batches"] is True
    agreed = client.initialize(capabilities={"batch": False})["capabilities"]
    assert agreed["progress"] is False and agreed["batches"] is False
    with pytest.raises(RPCError) as refused:
        client.initialize(capabilities={"progress": "yes"})
    assert refused.value.data["pointer"] == "/capabilities/progress"


def test_a_client_that_cannot_drive_the_clock_is_refused_a_virtual_one(spawn):
    client = spawn("--clock", "virtual")
    with pytest.raises(RPCError) as refused:
        client.initialize(capabilities={"clock": False})
    assert refused.value.data["pointer"] == "/capabilities/clock"
    assert "clock/advance" in refused.value.data["reason"]
    real = spawn()
    with pytest.raises(RPCError) as refused:
        real.initialize(capabilities={"clock": False}, clock="virtual")
    assert refused.value.data["pointer"] == "/clock"
    assert real.initialize(capabilities={"clock": False})["capabilities"]["clock"] == "real"


def test_the_async_client_hears_progress_and_cancels_the_work(stateserver_bin):
    async def test():
        command = [stateserver_bin, "--ephemeral", "--clock", "virtual"]
        async with await AsyncClient.spawn(command) as client:
            await client.initialize(subscribe="none")
            for number in range(2):
                await client.dispatch("notes", {"type": "add", "text": f"note {number}"})
            seen = []
            await client.dispatch("notes", {"type": "sync"}, on_progress=seen.append)
            await client.advance(2 * LATENCY_MS)
            assert seen == [begin(0, 2, "0 of 2 changes done"),
                            report(1, 2, "1 of 2 changes done"),
                            report(2, 2, "2 of 2 changes done"), end(2, 2)]

            # Cancelling the task awaiting a settled sync cancels the request and its work.
            await client.dispatch("notes", {"type": "add", "text": "late"})
            seen.clear()
            ended = asyncio.get_running_loop().create_future()

            def hear(value):
                seen.append(value)
                if value["kind"] == "end":
                    ended.set_result(value)

            waiting = asyncio.ensure_future(client.dispatch(
                "notes", {"type": "sync"}, wait="settled", on_progress=hear))
            while not seen:
                await client.advance(0)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            assert (await asyncio.wait_for(ended, 30)) == end(0, 1, cancelled=True)
            sync = await client.request("state/get", {"store": "notes", "path": "/sync"})
            assert sync["state"]["status"] == "idle" and sync["state"]["pending"] == 1

    asyncio.run(asyncio.wait_for(test(), 60))


def test_the_async_client_cancels_answered_work_by_its_id(stateserver_bin):
    async def test():
        command = [stateserver_bin, "--ephemeral", "--clock", "virtual"]
        async with await AsyncClient.spawn(command) as client:
            await client.initialize(subscribe="none")
            for number in range(3):
                await client.dispatch("notes", {"type": "add", "text": f"note {number}"})
            ended = asyncio.get_running_loop().create_future()
            seen = []

            def hear(value):
                seen.append(value)
                if value["kind"] == "end":
                    ended.set_result(value)

            await client.dispatch("notes", {"type": "sync"}, id="sync-1", on_progress=hear)
            await client.advance(LATENCY_MS)
            client.cancel("sync-1")
            assert (await asyncio.wait_for(ended, 30)) == end(1, 3, cancelled=True)
            assert [value["kind"] for value in seen] == ["begin", "report", "end"]

    asyncio.run(asyncio.wait_for(test(), 60))


def test_only_the_client_that_dispatched_hears_its_progress(spawn, attach, sock_dir):
    path = sock_dir / "core.sock"
    owner = listening(spawn, path, "--clock", "virtual")
    guest = attach(path)
    owner.initialize(subscribe="none")
    guest.initialize(subscribe="none")
    add_notes(guest, 2)
    seen = []
    guest.dispatch("notes", {"type": "sync"}, id=1, on_progress=seen.append)
    # The owner's request 1 is another request: cancelling it cancels nothing of the guest's.
    owner.cancel(1)
    owner.request("store/list")  # answered once the cancel was served
    # The guest moves time: its progress comes before its own answer.
    guest.advance(2 * LATENCY_MS)
    assert [value["kind"] for value in seen] == ["begin", "report", "report", "end"]
    assert seen[-1] == end(2, 2)
    owner.request("store/list")  # anything queued for the owner meanwhile came before this
    assert progress_messages(owner) == []


# Every registration ends: the server sends one `end` for each dispatch that gave a token, also
# when nothing reported, so a client can drop its callback then.

LATER = {"type": "incrementLater", "afterMs": 100}  # an effect that never reports


def test_work_that_never_reports_still_ends_and_the_client_lets_go(spawn):
    client = spawn("--clock", "virtual")
    client.initialize(subscribe="none")
    seen = []
    client.dispatch("counter", LATER, on_progress=seen.append)
    assert len(client.progress_tokens) == 1  # the effect still waits for its 100 ms
    assert seen == []
    client.advance(100)  # the effect ran; its end comes before this answer
    assert seen == [{"kind": "end", "done": 0, "cancelled": False}]
    assert client.progress_tokens == frozenset()
    # An action that starts no effect at all ends at once, before its response.
    client.dispatch("counter", {"type": "increment"}, on_progress=seen.append)
    assert seen[-1] == {"kind": "end", "done": 0, "cancelled": False}
    assert client.progress_tokens == frozenset()
    # A settled dispatch is answered after its end; a refused one never registers for long.
    client.dispatch("counter", {"type": "incrementLater", "afterMs": 0}, wait="settled",
                    on_progress=seen.append)
    assert client.progress_tokens == frozenset()
    with pytest.raises(RPCError):
        client.dispatch("counter", {"type": "nope"}, on_progress=seen.append)
    assert client.progress_tokens == frozenset()
    assert len(seen) == 3


def test_cancelled_work_that_never_reported_ends_cancelled(spawn):
    client = spawn("--clock", "virtual")
    client.initialize(subscribe="none")
    seen = []
    client.dispatch("counter", LATER, id="later", on_progress=seen.append)
    client.cancel("later")
    client.advance(0)  # served after the cancel, and after the end it caused
    assert seen == [{"kind": "end", "done": 0, "cancelled": True}]
    assert client.progress_tokens == frozenset()
    assert client.request("state/get", {"store": "counter"})["state"]["count"] == 0


def test_the_async_client_lets_go_of_work_that_never_reports(stateserver_bin):
    async def test():
        command = [stateserver_bin, "--ephemeral", "--clock", "virtual"]
        async with await AsyncClient.spawn(command) as client:
            await client.initialize(subscribe="none")
            seen = []
            await client.dispatch("counter", LATER, on_progress=seen.append)
            assert len(client.progress_tokens) == 1
            await client.advance(100)
            assert seen == [{"kind": "end", "done": 0, "cancelled": False}]
            assert client.progress_tokens == frozenset()

    asyncio.run(asyncio.wait_for(test(), 60))


# The async iterator form: `async with client.progress(...) as updates: async for ...`.


def test_async_progress_iterates_until_the_end(stateserver_bin):
    async def test():
        command = [stateserver_bin, "--ephemeral", "--clock", "virtual"]
        async with await AsyncClient.spawn(command) as client:
            await client.initialize(subscribe="none")
            for number in range(2):
                await client.dispatch("notes", {"type": "add", "text": f"note {number}"})
            async with client.progress("notes", {"type": "sync"}) as sync:
                assert sync.result == {"store": "notes", "version": 3}
                advancing = asyncio.ensure_future(client.advance(2 * LATENCY_MS))
                updates = [update async for update in sync]
                await advancing
            assert updates == [begin(0, 2, "0 of 2 changes done"),
                               report(1, 2, "1 of 2 changes done"),
                               report(2, 2, "2 of 2 changes done"), end(2, 2)]
            assert sync.end == end(2, 2) and not sync.cancelled
            assert [update async for update in sync] == []  # it ended: nothing more
            assert client.progress_tokens == frozenset()

            # Work that never reports: the loop yields the end alone.
            async with client.progress("counter", LATER) as later:
                await client.advance(100)
                assert [update async for update in later] == [
                    {"kind": "end", "done": 0, "cancelled": False}]

    asyncio.run(asyncio.wait_for(test(), 60))


def test_async_progress_cancel_ends_the_loop_and_leaving_early_cancels(stateserver_bin):
    async def test():
        command = [stateserver_bin, "--ephemeral", "--clock", "virtual"]
        async with await AsyncClient.spawn(command) as client:
            await client.initialize(subscribe="none")
            for number in range(3):
                await client.dispatch("notes", {"type": "add", "text": f"note {number}"})
            kinds = []
            async with client.progress("notes", {"type": "sync"}) as sync:
                await client.advance(LATENCY_MS)
                async for update in sync:
                    kinds.append(update["kind"])
                    if update["kind"] == "report":
                        sync.cancel()
            assert kinds == ["begin", "report", "end"]
            assert sync.cancelled and sync.end == end(1, 3, cancelled=True)
            state = await client.request("state/get", {"store": "notes", "path": "/sync"})
            assert state["state"]["status"] == "idle" and state["state"]["pending"] == 2

            # Leaving the block before the end cancels the work; the client keeps nothing.
            async with client.progress("notes", {"type": "sync"}) as sync:
                async for update in sync:
                    assert update["kind"] == "begin"
                    break
            assert client.progress_tokens == frozenset()
            await client.advance(10 * LATENCY_MS)
            state = await client.request("state/get", {"store": "notes", "path": "/sync"})
            assert state["state"]["status"] == "idle" and state["state"]["pending"] == 2

            # A refused dispatch raises on entering and keeps nothing.
            with pytest.raises(RPCError):
                async with client.progress("notes", {"type": "nope"}):
                    pass
            assert client.progress_tokens == frozenset()

    asyncio.run(asyncio.wait_for(test(), 60))


# `capabilities.batch: false`: the client cannot read an array of responses, so a batch it sends
# anyway is answered one line per response, each as soon as it is ready.


def test_a_client_that_reads_no_batches_gets_each_response_on_its_own_line(spawn):
    client = spawn("--clock", "virtual")
    agreed = client.initialize(capabilities={"batch": False}, subscribe="none")["capabilities"]
    assert agreed["batches"] is False
    start = len(client.messages)
    client.send([
        {"jsonrpc": "2.0", "id": "later", "method": "dispatch",
         "params": {"store": "counter", "action": LATER, "wait": "settled"}},
        {"jsonrpc": "2.0", "id": "now", "method": "dispatch",
         "params": {"store": "counter", "action": {"type": "increment"}}},
        {"jsonrpc": "2.0", "method": "dispatch",
         "params": {"store": "counter", "action": {"type": "increment"}}},
        {"jsonrpc": "2.0", "id": "bad", "method": "nope"},
    ])
    client.wait_for(lambda m: isinstance(m, dict) and m.get("id") == "bad", start=start)
    client.advance(100)  # the settled dispatch is answered once its effect ran
    client.wait_for(lambda m: isinstance(m, dict) and m.get("id") == "later", start=start)
    responses = [m for m in client.messages[start:] if isinstance(m, (dict, list))
                 and (isinstance(m, list) or "method" not in m)]
    assert not any(isinstance(m, list) for m in responses)
    ids = [m["id"] for m in responses]
    assert ids.index("now") < ids.index("bad") < ids.index("later")  # each as it was ready
    assert ids.count("now") == ids.count("bad") == ids.count("later") == 1
    assert [m for m in responses if m["id"] == "bad"][0]["error"]["code"] == -32601
    assert client.request("state/get", {"store": "counter"})["state"]["count"] == 3

    # A repeated initialize without it reads batches again: one array, in the batch's order.
    assert client.initialize(subscribe="none")["capabilities"]["batches"] is True
    start = len(client.messages)
    client.send([{"jsonrpc": "2.0", "id": "a", "method": "store/list"},
                 {"jsonrpc": "2.0", "id": "b", "method": "nope"}])
    answer = client.wait_for(lambda m: isinstance(m, list), start=start)
    assert [m["id"] for m in answer] == ["a", "b"]
