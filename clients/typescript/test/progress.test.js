// Progress of long effects from Node: the notes sync reports one unit per change as the virtual
// clock moves (each upload takes the backend's 50 ms), aborting cancels it, and a client that
// did not say it speaks progress gets none.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { serverBinary, startServer } from '../test-support/environment.js';

const binary = serverBinary();
const LATENCY_MS = 50; // the backend's default latency: one upload

/** @param {import('../src/index.js').Client} client @param {number} count */
async function addNotes(client, count) {
  for (let number = 0; number < count; number++) {
    await client.dispatch('notes', { type: 'add', text: `note ${number}` });
  }
}

describe('$/progress', { skip: binary.skip, timeout: 60_000 }, () => {
  test('a sync reports begin, each change, then end', async (t) => {
    const client = await startServer(t, ['--clock', 'virtual']);
    const answer = await client.initialize({ subscribe: 'none' });
    assert.equal(answer.capabilities.progress, true);
    assert.equal(client.capabilities?.progress, true);
    await addNotes(client, 2);
    /** @type {any[]} */
    const seen = [];
    await client.dispatch('notes', { type: 'sync' }, { onProgress: (value) => seen.push(value) });
    await client.advance(LATENCY_MS);
    await client.advance(LATENCY_MS);
    assert.deepEqual(seen, [
      { kind: 'begin', done: 0, total: 2, message: '0 of 2 changes done' },
      { kind: 'report', done: 1, total: 2, message: '1 of 2 changes done' },
      { kind: 'report', done: 2, total: 2, message: '2 of 2 changes done' },
      { kind: 'end', done: 2, total: 2, cancelled: false },
    ]);
  });

  test('aborting after the response cancels the sync and ends its progress', async (t) => {
    const client = await startServer(t, ['--clock', 'virtual']);
    await client.initialize({ subscribe: 'none' });
    await addNotes(client, 3);
    const controller = new AbortController();
    /** @type {any[]} */
    const seen = [];
    /** @type {Promise<any>} */
    const ended = new Promise((resolve) => {
      client.dispatch('notes', { type: 'sync' }, {
        signal: controller.signal,
        onProgress: (value) => {
          seen.push(value);
          if (value.kind === 'end') resolve(value);
        },
      });
    });
    await client.advance(LATENCY_MS);
    assert.deepEqual(seen.map((value) => value.kind), ['begin', 'report']);
    controller.abort();
    assert.deepEqual(await ended, { kind: 'end', done: 1, total: 3, cancelled: true });
    await client.advance(10 * LATENCY_MS); // nothing more uploads
    const { state } = await client.request('state/get', { store: 'notes', path: '/sync' });
    assert.equal(state.status, 'idle');
    assert.equal(state.pending, 2);
  });

  test('a client that did not say it speaks progress gets none', async (t) => {
    const client = await startServer(t, ['--clock', 'virtual']);
    const answer = await client.initialize({ capabilities: { batch: true } });
    assert.equal(answer.capabilities.progress, false);
    /** @type {any[]} */
    const notices = [];
    client.on('$/progress', (params) => notices.push(params));
    await addNotes(client, 1);
    await client.request('dispatch', {
      store: 'notes', action: { type: 'sync' }, progressToken: 'mine',
    });
    await client.advance(LATENCY_MS);
    const { state } = await client.request('state/get', { store: 'notes', path: '/sync' });
    assert.equal(state.status, 'idle'); // the sync ran to its end
    assert.deepEqual(notices, []);
    await assert.rejects(
      client.dispatch('notes', { type: 'sync' }, { onProgress: () => {} }), /initialize/);
  });

  test('work that never reports still ends, and the client lets go of its callback', async (t) => {
    const client = await startServer(t, ['--clock', 'virtual']);
    await client.initialize({ subscribe: 'none' });
    /** @type {any[]} */
    const seen = [];
    const onProgress = (/** @type {any} */ value) => seen.push(value);
    await client.dispatch('counter', { type: 'incrementLater', afterMs: 100 }, { onProgress });
    assert.equal(client.progressTokens.length, 1); // the effect still waits for its 100 ms
    await client.advance(100); // it ran: its end comes before this answer
    assert.deepEqual(seen, [{ kind: 'end', done: 0, cancelled: false }]);
    assert.deepEqual(client.progressTokens, []);
    // An action that starts no effect ends at once; a settled one is answered after its end;
    // a refused one keeps nothing.
    await client.dispatch('counter', { type: 'increment' }, { onProgress });
    await client.dispatch('counter', { type: 'incrementLater', afterMs: 0 },
      { wait: 'settled', onProgress });
    await assert.rejects(client.dispatch('counter', { type: 'nope' }, { onProgress }));
    assert.equal(seen.length, 3);
    assert.deepEqual(client.progressTokens, []);
    // Aborting work that never reported ends it cancelled, and lets go as well.
    const controller = new AbortController();
    await client.dispatch('counter', { type: 'incrementLater', afterMs: 100 },
      { onProgress, signal: controller.signal });
    controller.abort();
    await client.advance(0); // served after the cancel, and after the end it caused
    assert.deepEqual(seen.at(-1), { kind: 'end', done: 0, cancelled: true });
    assert.deepEqual(client.progressTokens, []);
  });
});
