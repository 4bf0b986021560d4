// Issue 30 from Node, as a GUI would drive it: one source of truth across stores (navigation
// reads the `users` store, not a copy), a list that goes stale with age on a virtual clock, and an
// optimistic rename the server fails rolled back with its error shown.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { serverBinary, startServer } from '../test-support/environment.js';

const binary = serverBinary();
const TTL_MS = 300_000; // --users-ttl's default
const LATENCY_MS = 50; // the backend's default latency

/**
 * Collects each store/event of `store` from now on.
 *
 * @param {import('../src/index.js').Client} client
 * @param {string} store
 */
function events(client, store) {
  /** @type {any[]} */
  const seen = [];
  client.on('store/event', (params) => { if (params.store === store) seen.push(params.event); });
  return seen;
}

describe('navigation reads users from the users store', { skip: binary.skip, timeout: 60_000 }, () => {
  test('a user loaded in users opens in navigation, and a rename shows there', async (t) => {
    const client = await startServer(t, ['--latency', '0']);
    const toasts = events(client, 'navigation');
    const push = (/** @type {number} */ userId) => client.dispatch(
      'navigation', { type: 'push', destination: { screen: 'userDetail', userId } },
      { wait: 'settled' });
    const navigation = async () => (await client.request('state/get', { store: 'navigation' })).state;

    await client.dispatch('users', { type: 'load' }, { wait: 'settled' });
    const users = (await client.request('state/get', { store: 'users' }));
    await push(2);
    let view = await navigation();
    assert.deepEqual(view.path, [{ screen: 'userDetail', userId: 2 }]);
    assert.deepEqual(view.shownUser, users.state.users[1]);
    assert.equal(view.usersVersion, users.version);
    assert.deepEqual(toasts, []);

    const renamed = await client.dispatch(
      'users', { type: 'rename', id: 2, name: 'Zed' }, { wait: 'settled' });
    await client.dispatch('navigation', { type: 'pop' }, { wait: 'settled' });
    await push(2);
    view = await navigation();
    assert.equal(view.shownUser.name, 'Zed');
    assert.ok(view.usersVersion >= renamed.version);

    await push(999);
    assert.deepEqual(toasts.map((e) => e.message), ['User 999 does not exist.']);
  });
});

describe('isStale follows age', { skip: binary.skip, timeout: 60_000 }, () => {
  test('advancing past expiresAt patches isStale, without waiting', async (t) => {
    const client = await startServer(t, ['--clock', 'virtual']);
    const load = async () => (await client.request(
      'state/get', { store: 'users', path: '/load' })).state;
    await client.dispatch('users', { type: 'load' });
    await client.advance(LATENCY_MS);
    assert.equal((await load()).isStale, false);

    /** @type {any[]} */
    const patches = [];
    client.on('state/patch', (params) => { if (params.store === 'users') patches.push(params); });
    const started = performance.now();
    await client.advance(TTL_MS - 1);
    assert.equal((await load()).isStale, false);
    await client.advance(1);
    assert.ok(patches.some((p) => p.patch.some((/** @type {any} */ op) =>
      op.path === '/load/isStale' && op.value === true)));
    assert.equal((await load()).isStale, true);
    assert.ok(performance.now() - started < 5_000, 'time was moved, not waited for');
  });
});

describe('a failed optimistic rename', { skip: binary.skip, timeout: 60_000 }, () => {
  test('rolls back to the name before it and shows the error', async (t) => {
    const client = await startServer(t, ['--latency', '0']);
    const users = async () => (await client.request('state/get', { store: 'users' })).state;
    await client.dispatch('users', { type: 'load' }, { wait: 'settled' });
    const before = (await users()).users[41].name;
    await client.dispatch('backend', { type: 'setFailRate', rate: 1 }, { wait: 'settled' });
    await client.dispatch(
      'users', { type: 'rename', id: 42, name: 'Quentin New' }, { wait: 'settled' });
    const view = await users();
    assert.equal(view.users[41].name, before);
    assert.deepEqual(view.edits, []);
    assert.equal(view.renameError, 'Could not rename the user. Please try again.');
  });
});
