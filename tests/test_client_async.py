"""The asyncio client (clients/python `AsyncClient`, `AsyncMirror`), each test one
`asyncio.run`: requests, notifications as an async iterator, mirrors with change callbacks,
timeouts that quote stderr, cancellation that reaches the server, and `ServerExited` at once."""
import asyncio
import sys

import pytest

from stateserver import AsyncClient, AsyncMirror, RPCError, ServerExited

TIMEOUT = 30  # only bounds a hang
CANCELLED = -32800
NOT_JSON_SERVER = "import sys, time; sys.stdin.readline(); print('oops, not JSON', flush=True); " \
    "time.sleep(600)"
SLOW = {"type": "incrementLater", "afterMs": 600000}  # an effect that never ends in a test


def run(test):
    asyncio.run(asyncio.wait_for(test(), TIMEOUT * 2))


def answer_to(client, id):
    """A future of the response (error or result) carrying `id`, seen by a listener."""
    future = asyncio.get_running_loop().create_future()

    def listener(message):
        if isinstance(message, dict) and message.get("id") == id and not future.done():
            future.set_result(message)

    client.add_listener(listener)
    return future


def test_requests_results_and_errors(stateserver_bin):
    async def test():
        async with await AsyncClient.spawn([stateserver_bin, "--ephemeral"]) as client:
            assert await client.dispatch("counter", {"type": "increment"}) == {
                "store": "counter", "version": 1}
            assert (await client.request("state/get", {"store": "counter"}))["state"] == {"count": 1}
            with pytest.raises(RPCError) as raised:
                await client.dispatch("cart", {"type": "setQuantity", "id": "a", "quantity": -1})
            assert raised.value.code == -32602 and raised.value.data["pointer"] == "/action/quantity"
            # Concurrent requests each get their own answer.
            results = await asyncio.gather(*(client.dispatch("counter", {"type": "increment"})
                                             for _ in range(20)))
            assert sorted(r["version"] for r in results) == list(range(2, 22))
    run(test)


def test_notifications_are_an_async_iterator(stateserver_bin):
    async def test():
        async with await AsyncClient.spawn([stateserver_bin, "--ephemeral"]) as client:
            patches = client.notifications("state/patch")
            for _ in range(3):
                await client.dispatch("counter", {"type": "increment"}, notify=True)
            seen = []
            async for message in patches:
                seen.append(message["params"]["patch"][0]["value"])
                if len(seen) == 3:
                    break
            assert seen == [1, 2, 3]
            # An iterator ends when the server does.
            rest = client.notifications()
            await client.close()
            assert [m async for m in rest] == []
    run(test)


def test_a_mirror_with_a_change_callback_follows_the_store(stateserver_bin):
    async def test():
        async with await AsyncClient.spawn([stateserver_bin, "--ephemeral"]) as client:
            changes = []
            cart = await AsyncMirror.open(client, "cart", on_change=lambda state, change:
                                          changes.append((change["reason"], state["total"])))
            await client.dispatch("cart", {"type": "add", "id": "a", "name": "A", "price": 300})
            item = await AsyncMirror.open(client, "cart", "/items/0")
            assert item.exists and item.state["quantity"] == 1
            result = await client.dispatch("cart", {"type": "setQuantity", "id": "a",
                                                    "quantity": 2})
            assert (await cart.sync(result["version"]))["total"] == 600
            assert changes == [("load", 0), ("patch", 300), ("patch", 600)]
            assert (await item.sync(result["version"]))["quantity"] == 2
            state = await client.wait_until("cart", lambda state: state["badgeCount"] == 2)
            assert state == cart.state and cart.resyncs == 0
            # A path's subtree goes away and comes back.
            removed = await client.dispatch("cart", {"type": "remove", "id": "a"})
            assert await item.sync(removed["version"]) is None and not item.exists
            added = await client.dispatch("cart", {"type": "add", "id": "b", "name": "B",
                                                   "price": 1})
            assert (await item.sync(added["version"]))["id"] == "b" and item.exists
            assert client.listener_errors == [] and item.resyncs == 0
    run(test)


def test_wait_until_waits_for_an_effect(stateserver_bin):
    async def test():
        async with await AsyncClient.spawn([stateserver_bin, "--ephemeral"]) as client:
            await client.dispatch("counter", {"type": "incrementLater", "afterMs": 100})
            assert await client.wait_until("counter", lambda s: s["count"] == 1) == {"count": 1}
            with pytest.raises(TimeoutError, match="never reached the predicate"):
                await client.wait_until("counter", lambda s: s["count"] == 9, timeout=0.2)
    run(test)


def test_a_timeout_quotes_stderr_and_cancels_the_request_on_the_server(stateserver_bin):
    async def test():
        async with await AsyncClient.spawn([stateserver_bin, "--ephemeral"],
                                           record=True) as client:
            client.notify("dispatch", {"store": "nowhere", "action": {"type": "x"}})
            assert await client.wait_stderr("nowhere")  # stderr is read on its own schedule
            cancelled = answer_to(client, 2)  # the request below is the client's second
            await client.request("store/list")
            with pytest.raises(TimeoutError, match=r"(?s)within 0.2s.*stderr ends with.*nowhere"):
                await client.dispatch("counter", SLOW, wait="settled", timeout=0.2)
            assert (await asyncio.wait_for(cancelled, TIMEOUT))["error"]["code"] == CANCELLED
    run(test)


def test_cancelling_the_task_sends_cancel_request(stateserver_bin):
    async def test():
        async with await AsyncClient.spawn([stateserver_bin, "--ephemeral"]) as client:
            cancelled = answer_to(client, 1)
            task = asyncio.ensure_future(client.dispatch("counter", SLOW, wait="settled"))
            await asyncio.sleep(0)  # the task runs up to its first wait: the request is written
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert (await asyncio.wait_for(cancelled, TIMEOUT))["error"]["code"] == CANCELLED
            assert (await client.request("state/get", {"store": "counter"}))["version"] == 0
    run(test)


def test_the_server_dying_raises_server_exited_in_every_waiting_call(stateserver_bin):
    async def test():
        client = await AsyncClient.spawn([stateserver_bin, "--ephemeral"])
        pending = [asyncio.ensure_future(client.dispatch("counter", SLOW, wait="settled"))
                   for _ in range(3)]
        await client.request("store/list")  # the slow ones are in the server
        client.process.kill()
        for task in pending:
            with pytest.raises(ServerExited, match="exited before answering"):
                await task
        with pytest.raises(ServerExited):
            await client.request("store/list")
        assert await client.close() == -9
    run(test)


def test_a_line_that_is_not_json_raises_server_exited_at_once():
    async def test():
        client = await AsyncClient.spawn([sys.executable, "-c", NOT_JSON_SERVER])
        try:
            with pytest.raises(ServerExited, match="not JSON"):
                await client.request("store/list", timeout=TIMEOUT)
            assert client.process.returncode is None  # alive: the client gave up on it
        finally:
            client.process.kill()
            await client.close()
    run(test)


def test_shutdown_returns_the_exit_status(stateserver_bin):
    async def test():
        client = await AsyncClient.spawn([stateserver_bin, "--ephemeral"])
        await client.dispatch("counter", {"type": "increment"})
        assert await client.shutdown() == 0
        assert client.closed
    run(test)


def test_a_paused_client_catches_up_with_merged_patches(stateserver_bin):
    async def test():
        async with await AsyncClient.spawn([stateserver_bin, "--ephemeral"]) as client:
            counter = await AsyncMirror.open(client, "counter")
            client.pause()
            count = 20_000
            for _ in range(count):
                await client.dispatch("counter", {"type": "increment"}, notify=True)
            await client.drain()  # the server reads on; its patches cannot all be written
            asked = asyncio.ensure_future(client.request("state/get", {"store": "counter"}))
            await asyncio.sleep(0)  # the request is written while nothing is read
            client.resume()
            assert (await asked)["state"] == {"count": count}
            assert await counter.sync(count) == {"count": count}
            assert counter.coalesced > 0 and counter.patches < count, counter.patches
            assert counter.resyncs == 0
            probe = asyncio.ensure_future(client.wait_for(
                lambda m: isinstance(m, dict) and m.get("method") == "state/patch"))
            await asyncio.sleep(0)  # the listener is in place before the change
            await client.dispatch("counter", {"type": "reset"})
            assert (await probe)["params"]["to"] == counter.version
    run(test)
