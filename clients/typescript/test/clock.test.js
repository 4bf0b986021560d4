// The virtual clock from Node: a debounce tested by moving time, not by waiting for it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { RPCError } from '../src/index.js';
import { serverBinary, startServer } from '../test-support/environment.js';

const binary = serverBinary();
const DEBOUNCE_MS = 300; // UsersFeature.searchDebounce
const LATENCY_MS = 50; // the backend's default latency

describe('advance on a virtual clock', { skip: binary.skip, timeout: 60_000 }, () => {
  test('the debounced search runs when time reaches it, not before', async (t) => {
    const client = await startServer(t, ['--clock', 'virtual']);
    const users = async () => (await client.request('state/get', { store: 'users' })).state;
    await client.dispatch('users', { type: 'load' });
    assert.equal(await client.advance(LATENCY_MS), LATENCY_MS);
    assert.equal((await users()).load.status, 'loaded');

    const started = performance.now();
    await client.dispatch('users', { type: 'search', query: 'carla' });
    await client.advance(DEBOUNCE_MS - 1);
    assert.equal((await users()).searching, true);
    /** @type {any[]} */
    const patches = [];
    client.on('state/patch', (params) => patches.push(params));
    assert.equal(await client.advance(1 + LATENCY_MS), 2 * LATENCY_MS + DEBOUNCE_MS);
    // The patches of what ran arrived before advance resolved.
    assert.ok(patches.some((p) => p.store === 'users'
      && p.patch.some((/** @type {any} */ op) => op.path === '/results')));
    const view = await users();
    assert.equal(view.searching, false);
    assert.ok(view.results.length > 0
      && view.results.every((/** @type {any} */ u) => u.name.includes('Carla')));
    assert.ok(performance.now() - started < DEBOUNCE_MS, 'no real time was waited for');
  });

  test('a real clock refuses to advance and says how to get a virtual one', async (t) => {
    const client = await startServer(t);
    await assert.rejects(client.advance(10), (error) => {
      assert.ok(error instanceof RPCError);
      assert.match(error.data.reason, /--clock virtual/);
      return true;
    });
  });
});
