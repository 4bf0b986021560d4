// End to end: Mirror against the real stateserver binary ($STATESERVER_BIN).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { Mirror, RPCError } from '../src/index.js';
import { serverBinary, startServer } from '../test-support/environment.js';

const binary = serverBinary();

describe('Mirror against stateserver', { skip: binary.skip, timeout: 120_000 }, () => {
  test('follows thousands of pipelined increments to the exact final state', async (t) => {
    const client = await startServer(t);
    const mirror = await Mirror.open(client, 'counter');
    assert.deepEqual([mirror.state, mirror.version], [{ count: 0 }, 0]);
    const count = 5_000;
    for (let i = 0; i < count; i++) {
      client.dispatch('counter', { type: 'increment' }, { notify: true });
    }
    const last = await client.dispatch('counter', { type: 'decrement' });
    assert.equal(last.version, count + 1);
    assert.deepEqual(await mirror.sync(last.version), { count: count - 1 });
    assert.equal(mirror.version, count + 1);
    assert.deepEqual(mirror.state, (await client.request('state/get', { store: 'counter' })).state);
    assert.equal(mirror.resyncs, 0);
    assert.ok(mirror.patches > 0 && mirror.patches <= count + 1);
  });

  test('a client that stopped reading gets merged patches and mirrors exactly', async (t) => {
    const client = await startServer(t);
    await client.request('store/open', { feature: 'cart', store: 'c' });
    await client.dispatch('c', { type: 'add', id: 'sku-1', name: 'Pen', price: 250 });
    const counter = await Mirror.open(client, 'counter');
    const cart = await Mirror.open(client, 'c');
    const item = await Mirror.open(client, 'c', { path: '/items/0' });
    client.pause();
    const count = 20_000;
    for (let i = 1; i <= count; i++) {
      client.dispatch('counter', { type: 'increment' }, { notify: true });
      if (i % 4 === 0) {
        const quantity = 1 + (i % 97); // 0 would remove the item
        client.dispatch('c', { type: 'setQuantity', id: 'sku-1', quantity }, { notify: true });
      }
    }
    // The server has read all but the last pipe-full: ~1.7 MB of patches could not be written.
    await client.drained();
    client.resume();
    const [finalCounter, finalCart] = await Promise.all([
      client.request('state/get', { store: 'counter' }),
      client.request('state/get', { store: 'c' }),
    ]);
    assert.deepEqual(finalCounter, { store: 'counter', version: count, state: { count } });
    assert.deepEqual(await counter.sync(count), finalCounter.state);
    assert.deepEqual(await cart.sync(finalCart.version), finalCart.state);
    assert.deepEqual(await item.sync(finalCart.version), finalCart.state.items[0]);
    assert.equal(item.state.quantity, 1 + (count % 97));
    t.diagnostic(`counter: ${counter.patches} patches (${counter.coalesced} merged) for ${count}`);
    assert.ok(counter.coalesced > 0 && counter.patches < count, `${counter.patches} patches`);
    assert.equal(counter.resyncs + cart.resyncs + item.resyncs, 0);
  });

  test('sync() without a version waits for the store version at the call', async (t) => {
    const client = await startServer(t);
    const mirror = new Mirror(client, 'counter');
    for (let i = 0; i < 300; i++) {
      client.dispatch('counter', { type: 'increment' }, { notify: true });
    }
    assert.deepEqual(await mirror.sync(), { count: 300 });
    assert.equal(mirror.version, 300);
  });

  test('onChange sees the load and every patch; a throwing onChange breaks nothing', async (t) => {
    const client = await startServer(t);
    const changes = /** @type {any[]} */ ([]);
    const mirror = await Mirror.open(client, 'counter', {
      onChange: (state, change) => changes.push([state.count, change.reason, change.version]),
    });
    mirror.onChange(() => { throw new Error('view bug'); });
    await client.dispatch('counter', { type: 'increment' });
    const { version } = await client.dispatch('counter', { type: 'set', value: 7 });
    assert.deepEqual(await mirror.sync(version), { count: 7 });
    assert.deepEqual(changes, [[0, 'load', 0], [1, 'patch', 1], [7, 'patch', 2]]);
    assert.deepEqual(client.listenerErrors.map((e) => [e.event, String(e.error)]),
      [['mirror.onChange', 'Error: view bug'], ['mirror.onChange', 'Error: view bug']]);
  });

  test('a gap in the versions makes it resync with state/get and carry on', async (t) => {
    const client = await startServer(t);
    const mirror = await Mirror.open(client, 'counter');
    // With subscribe "none" the client gets no patches: versions 1..3 pass unseen, so the first
    // patch after "all" starts at 3 while the mirror is at 0.
    await client.request('initialize', { subscribe: 'none' });
    for (let i = 0; i < 3; i++) await client.dispatch('counter', { type: 'increment' });
    await client.request('initialize', { subscribe: 'all' });
    const { version } = await client.dispatch('counter', { type: 'increment' });
    assert.equal(version, 4);
    assert.deepEqual(await mirror.sync(version), { count: 4 });
    assert.equal(mirror.resyncs, 1);
    const after = await client.dispatch('counter', { type: 'increment' });
    assert.deepEqual(await mirror.sync(after.version), { count: 5 });
    assert.equal(mirror.resyncs, 1);
  });

  test('a path subscription mirrors its subtree only', async (t) => {
    const client = await startServer(t);
    await client.request('initialize', { subscribe: 'none' });
    await client.request('store/open', { feature: 'cart', store: 'c' });
    const items = await Mirror.open(client, 'c', { path: '/items' });
    const badge = await Mirror.open(client, 'c', { path: '/badgeCount' });
    const patches = /** @type {any[]} */ ([]);
    client.on('state/patch', (params) => patches.push(params));
    await client.dispatch('c', { type: 'add', id: 'sku-1', name: 'Pen', price: 250 });
    await client.dispatch('c', { type: 'add', id: 'sku-2', name: 'Ink', price: 900 });
    const last = await client.dispatch('c', { type: 'setQuantity', id: 'sku-1', quantity: 3 });
    await items.sync(last.version);
    await badge.sync(last.version);
    const expected = await client.request('state/get', { store: 'c', path: '/items' });
    assert.deepEqual(items.state, expected.state);
    assert.equal(items.state.length, 2);
    assert.equal(badge.state, 4);
    assert.deepEqual(new Set(patches.map((p) => p.path)), new Set(['/items', '/badgeCount']));
    assert.ok(patches.filter((p) => p.path === '/items')
      .every((p) => p.patch.every((/** @type {any} */ op) => op.path.startsWith('/items'))));
    assert.equal(items.resyncs + badge.resyncs, 0);
  });

  test('a path subtree removed and added back: exists, state and sync follow', async (t) => {
    const client = await startServer(t);
    await client.request('store/open', { feature: 'cart', store: 'c' });
    await client.dispatch('c', { type: 'add', id: 'sku-1', name: 'Pen', price: 250 });
    const first = await Mirror.open(client, 'c', { path: '/items/0' });
    assert.equal(first.state.id, 'sku-1');
    const removed = await client.dispatch('c', { type: 'remove', id: 'sku-1' });
    await first.sync(removed.version);
    assert.equal(first.exists, false);
    assert.equal(first.state, undefined);
    const added = await client.dispatch('c', { type: 'add', id: 'sku-2', name: 'Ink', price: 900 });
    assert.equal((await first.sync(added.version)).id, 'sku-2');
    assert.equal(first.exists, true);
    // A change elsewhere in the store sends this subscription nothing; sync still returns.
    const nib = { type: 'add', id: 'sku-3', name: 'Nib', price: 90 };
    const elsewhere = await client.dispatch('c', nib);
    assert.equal(elsewhere.version, added.version + 1);
    assert.equal((await first.sync(elsewhere.version, { timeoutMs: 30_000 })).id, 'sku-2');
    assert.equal(first.version, elsewhere.version);
    await client.dispatch('c', { type: 'setQuantity', id: 'sku-3', quantity: 2 });
    assert.equal((await first.sync(undefined, { timeoutMs: 30_000 })).id, 'sku-2');
    assert.equal(first.version, elsewhere.version + 1);
    assert.equal(first.resyncs, 0);
  });

  test('sync finds a subtree that went away unseen: it resyncs to absent', async (t) => {
    const client = await startServer(t);
    await client.request('store/open', { feature: 'cart', store: 'c' });
    await client.dispatch('c', { type: 'add', id: 'sku-1', name: 'Pen', price: 250 });
    const mirror = await Mirror.open(client, 'c', { path: '/items/0' });
    // "none" drops every subscription: the removal below sends this mirror no patch.
    await client.request('initialize', { subscribe: 'none' });
    await client.dispatch('c', { type: 'remove', id: 'sku-1' });
    assert.equal(mirror.exists, true);
    assert.equal(await mirror.sync(undefined, { timeoutMs: 30_000 }), undefined);
    assert.equal(mirror.exists, false);
    assert.equal(mirror.resyncs, 1);
    await mirror.resync(); // an absent path is a state, not a failure
    assert.equal(mirror.resyncs, 2);
    // It comes back, unseen too: sync finds it present and resyncs again.
    await client.dispatch('c', { type: 'add', id: 'sku-2', name: 'Ink', price: 900 });
    assert.equal((await mirror.sync(undefined, { timeoutMs: 30_000 })).id, 'sku-2');
    assert.equal(mirror.exists, true);
    assert.equal(mirror.resyncs, 3);
  });

  test('a path that does not exist rejects ready with the server error', async (t) => {
    const client = await startServer(t);
    const mirror = new Mirror(client, 'counter', { path: '/nothing' });
    await assert.rejects(mirror.ready,
      (error) => error instanceof RPCError && error.data.pointer === '/path');
    await assert.rejects(mirror.sync(), RPCError);
  });

  test('sync rejects once the store is closed', async (t) => {
    const client = await startServer(t);
    await client.request('store/open', { feature: 'counter', store: 'short' });
    const mirror = await Mirror.open(client, 'short');
    const waiting = mirror.sync(99, { timeoutMs: 0 });
    await client.request('store/close', { store: 'short' });
    await assert.rejects(waiting, /store 'short' was closed \(closed\)/);
    assert.equal(mirror.closedReason, 'closed');
  });
});
