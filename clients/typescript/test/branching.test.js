// End to end: history/skip, store/fork, state/diff and state/blame through the Client.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ErrorCodes, RPCError } from '../src/index.js';
import { serverBinary, startServer } from '../test-support/environment.js';

const binary = serverBinary();

describe('Branching history', { skip: binary.skip, timeout: 120_000 }, () => {
  test('skip the middle of three edits equals a store that never saw it', async (t) => {
    const client = await startServer(t, ['--history', '100']);
    await client.dispatch('counter', { type: 'increment' });
    await client.dispatch('counter', { type: 'set', value: 10 });
    await client.dispatch('counter', { type: 'increment' });
    assert.deepEqual(await client.skip('counter', 2, true), { store: 'counter', version: 4 });
    await client.request('store/open', { feature: 'counter', store: 'never' });
    await client.dispatch('never', { type: 'increment' });
    await client.dispatch('never', { type: 'increment' });
    assert.deepEqual((await client.diff('counter', 'never')).patch, []);
    const { entries } = await client.history('counter');
    assert.deepEqual(entries.map((e) => e.skipped), [false, true, false, true]);
    assert.equal(entries[3].kind, 'skip');
  });

  test('fork, diff and blame', async (t) => {
    const client = await startServer(t, ['--history', '100']);
    await client.dispatch('counter', { type: 'set', value: 4 });
    await client.dispatch('counter', { type: 'increment' });
    const fork = await client.fork('counter', { version: 1, as: 'sandbox' });
    assert.deepEqual(fork.state, { count: 4 });
    assert.deepEqual((await client.diff('counter', 'sandbox')).patch,
      [{ op: 'replace', path: '/count', value: 4 }]);
    const blame = await client.blame('counter', '/count');
    assert.equal(blame.last?.version, 2);
    assert.deepEqual(blame.before.map((e) => e.version), [1]);
    await assert.rejects(client.skip('sandbox', 1, true), (error) =>
      error instanceof RPCError && error.code === ErrorCodes.notRecomputable);
  });
});
