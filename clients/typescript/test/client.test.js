// End to end: the Client against the real stateserver binary ($STATESERVER_BIN).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ErrorCodes, RPCError, ServerExitedError, spawn, TimeoutError } from '../src/index.js';
import { nextMessage, serverBinary, startServer } from '../test-support/environment.js';

const binary = serverBinary();
const DAY_MS = 86_400_000;

describe('Client against stateserver', { skip: binary.skip, timeout: 120_000 }, () => {
  test('request resolves with the result', async (t) => {
    const client = await startServer(t);
    assert.deepEqual(await client.request('state/get', { store: 'counter' }), {
      store: 'counter', version: 0, state: { count: 0 },
    });
    const { features } = await client.request('features/list');
    assert.ok(features.some((/** @type {any} */ f) => f.name === 'counter'));
    // Params JSON cannot express reject before anything is sent; the connection goes on.
    await assert.rejects(client.request('state/get', { store: 'counter', n: 1n }), TypeError);
    assert.equal((await client.request('store/list')).stores.length > 0, true);
  });

  test('concurrent requests get distinct ids and their own results', async (t) => {
    const client = await startServer(t);
    const ids = new Set();
    client.on('message', (message) => ids.add(message.id));
    const opened = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      client.request('store/open', { feature: 'counter', store: `c${i}`, state: { count: i } })));
    assert.deepEqual(opened.map((r) => r.state.count), Array.from({ length: 50 }, (_, i) => i));
    assert.equal(ids.size, 50);
  });

  test('an error response rejects with RPCError: code, message and data.pointer', async (t) => {
    const client = await startServer(t);
    const refused = client.dispatch('counter', { type: 'set', value: 'ten' });
    await assert.rejects(refused, (error) => {
      assert.ok(error instanceof RPCError);
      assert.equal(error.code, ErrorCodes.invalidParams);
      assert.equal(error.data.pointer, '/action/value');
      assert.match(error.message, /^dispatch: -32602 /);
      return true;
    });
    await assert.rejects(client.request('state/get', { store: 'nowhere' }),
      (error) => error instanceof RPCError && error.code === ErrorCodes.unknownStore);
    // The refusals changed nothing and the connection goes on.
    assert.equal((await client.request('state/get', { store: 'counter' })).version, 0);
  });

  test('dispatch with wait "settled" answers after the effect fed its action back', async (t) => {
    const client = await startServer(t);
    const order = /** @type {string[]} */ ([]);
    client.on('message', (m) => order.push(m.method ?? `response ${m.id}`));
    const reduced = await client.dispatch('counter', { type: 'incrementLater', afterMs: DAY_MS });
    assert.equal(reduced.version, 0); // "reduced": the effect has not run
    const later = { type: 'incrementLater', afterMs: 30 };
    const settled = await client.dispatch('counter', later, { wait: 'settled' });
    assert.deepEqual(settled, { store: 'counter', version: 1 });
    assert.deepEqual(order.slice(-2), ['state/patch', 'response 2']);
    assert.deepEqual((await client.request('state/get', { store: 'counter' })).state, { count: 1 });
  });

  test('notifications reach onNotification and the per-method listeners', async (t) => {
    const client = await startServer(t);
    const methods = /** @type {string[]} */ ([]);
    const patches = /** @type {any[]} */ ([]);
    const events = /** @type {any[]} */ ([]);
    const closed = /** @type {any[]} */ ([]);
    client.onNotification((message) => methods.push(message.method));
    client.on('state/patch', (params) => patches.push(params));
    client.on('store/event', (params) => events.push(params));
    client.on('store/closed', (params) => closed.push(params));
    await client.dispatch('counter', { type: 'set', value: 5 });
    await client.dispatch('navigation', { type: 'openURL', url: 'nonsense' });
    await client.request('store/open', { feature: 'counter', store: 'temporary' });
    await client.request('store/close', { store: 'temporary' });
    const patch = [{ op: 'replace', path: '/count', value: 5 }];
    assert.deepEqual(patches, [{ store: 'counter', from: 0, to: 1, patch, cause: 1 }]);
    assert.equal(events.length, 1);
    assert.equal(events[0].store, 'navigation');
    assert.equal(events[0].event.type, 'toast');
    assert.deepEqual(closed, [{ store: 'temporary', reason: 'closed' }]);
    assert.deepEqual(methods, ['state/patch', 'store/event', 'store/closed']);
  });

  test('a listener that throws does not stop the others or the client', async (t) => {
    const client = await startServer(t);
    const failure = new Error('listener bug');
    const seen = /** @type {number[]} */ ([]);
    const reported = /** @type {unknown[]} */ ([]);
    client.on('state/patch', () => { throw failure; });
    client.on('state/patch', (params) => seen.push(params.to));
    client.on('listenerError', (error) => reported.push(error));
    client.on('listenerError', () => { throw new Error('error listener bug'); });
    await client.dispatch('counter', { type: 'increment' });
    const { version } = await client.dispatch('counter', { type: 'increment' });
    assert.equal(version, 2);
    assert.deepEqual(seen, [1, 2]);
    assert.deepEqual(reported, [failure, failure]);
    assert.equal(client.listenerErrors.filter((e) => e.error === failure).length, 2);
    assert.equal(client.listenerErrors[0].event, 'state/patch');
  });

  test('aborting a request sends $/cancelRequest and rejects with the abort reason', async (t) => {
    const client = await startServer(t);
    const controller = new AbortController();
    const pending = client.dispatch('counter', { type: 'incrementLater', afterMs: DAY_MS },
      { wait: 'settled', signal: controller.signal });
    const cancelled = nextMessage(client, (m) => m.error?.code === ErrorCodes.requestCancelled);
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    // The server got the cancellation: it answered the request with -32800.
    const answer = await cancelled;
    assert.equal(answer.error.data.reason, 'cancelled by $/cancelRequest');
    // A signal aborted beforehand sends nothing.
    const early = client.request('store/list', undefined, { signal: AbortSignal.abort() });
    await assert.rejects(early, { name: 'AbortError' });
    assert.deepEqual(await client.request('state/get', { store: 'counter', path: '/count' }),
      { store: 'counter', version: 0, state: 0 });
  });

  test('a timeout rejects with TimeoutError quoting the server stderr', async (t) => {
    const client = await startServer(t);
    const logged = new Promise((resolve) => {
      client.on('stderr', () => {
        if (client.stderrText().includes('notification failed')) resolve(undefined);
      });
    });
    client.dispatch('counter', { type: 'no-such-action' }, { notify: true });
    await logged;
    const cancelled = nextMessage(client, (m) => m.error?.code === ErrorCodes.requestCancelled);
    await assert.rejects(
      client.dispatch('counter', { type: 'incrementLater', afterMs: DAY_MS },
        { wait: 'settled', timeoutMs: 50 }),
      (error) => {
        assert.ok(error instanceof TimeoutError);
        assert.match(error.message, /did not answer 'dispatch' \(id 1\) within 50 ms/);
        assert.match(error.message, /no-such-action/);
        return true;
      });
    await cancelled; // the timed-out request was cancelled on the server too
  });

  test('close ends stdin and resolves with the exit code; later requests reject', async (t) => {
    const client = await startServer(t);
    await client.dispatch('counter', { type: 'increment' });
    assert.equal(await client.close(), 0);
    assert.equal(client.closed, true);
    await assert.rejects(client.request('store/list'), ServerExitedError);
  });

  test('shutdown answers, then the process exits with 0', async (t) => {
    const client = await startServer(t);
    const exits = /** @type {any[]} */ ([]);
    client.on('exit', (status) => exits.push(status));
    assert.equal(await client.shutdown(), 0);
    assert.deepEqual(exits, [{ code: 0, signal: null }]);
  });

  test('pending requests reject when the process dies', async (t) => {
    const client = await startServer(t);
    const pending = client.dispatch('counter', { type: 'incrementLater', afterMs: DAY_MS },
      { wait: 'settled' });
    await client.request('store/list'); // the dispatch was read and is waiting on its effect
    client.kill('SIGKILL');
    await assert.rejects(pending, (error) => {
      assert.ok(error instanceof ServerExitedError);
      assert.equal(error.signal, 'SIGKILL');
      assert.match(error.message, /was ended by SIGKILL before answering 'dispatch'/);
      return true;
    });
    assert.equal(await client.close(), null);
  });

  test('a server that refuses its arguments: exit code and stderr in the error', async (t) => {
    const client = await startServer(t, ['--no-such-flag']);
    await assert.rejects(client.request('store/list'), (error) => {
      assert.ok(error instanceof ServerExitedError);
      assert.match(error.message, /exited with code [1-9]/);
      assert.match(error.message, /unknown option '--no-such-flag'/);
      return true;
    });
    assert.notEqual(await client.close(), 0);
  });

  test('a binary that does not exist rejects requests with ServerExitedError', async () => {
    const client = spawn({ binary: '/nonexistent/stateserver' });
    await assert.rejects(client.request('store/list'),
      /could not start \(spawn \/nonexistent\/stateserver ENOENT\)/);
    assert.equal(await client.close(), null);
  });

  test('a response larger than a pipe chunk, of multi-byte characters, is intact', async (t) => {
    const client = await startServer(t);
    const name = 'é漢😀'.repeat(40_000); // ~360 KB of 2-, 3- and 4-byte characters
    const opened = await client.request('store/open', { feature: 'cart', store: 'big', state: {} });
    assert.equal(opened.version, 0);
    await client.dispatch('big', { type: 'add', id: 'sku-1', name, price: 1 });
    const { state } = await client.request('state/get', { store: 'big', path: '/items/0/name' });
    assert.equal(state, name);
  });
});
