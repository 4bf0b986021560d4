// End to end: a Mirror's `coalesce` option renders a burst of changes once per task or frame,
// always with the latest state, against the real stateserver binary ($STATESERVER_BIN).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { Mirror } from '../src/index.js';
import { serverBinary, startServer } from '../test-support/environment.js';

const binary = serverBinary();
const BURST = 1_000;

/**
 * Sends BURST increments (the last one a request) and resolves with the last version.
 *
 * @param {import('../src/index.js').Client} client
 */
async function burst(client) {
  for (let i = 1; i < BURST; i++) {
    client.dispatch('counter', { type: 'increment' }, { notify: true });
  }
  return (await client.dispatch('counter', { type: 'increment' })).version;
}

/** Resolves after the setImmediate callbacks already queued (a 'task' render among them). */
const nextTask = () => new Promise((resolve) => setImmediate(resolve));

describe('Mirror coalescing', { skip: binary.skip, timeout: 120_000 }, () => {
  test("'task': a burst of 1,000 changes renders at most once per batch read", async (t) => {
    const client = await startServer(t);
    /** @type {{ count: number, changes: number | undefined }[]} */
    const coalesced = [];
    let immediate = 0;
    const eager = await Mirror.open(client, 'counter', { onChange: () => immediate++ });
    const mirror = await Mirror.open(client, 'counter', {
      coalesce: 'task',
      onChange: (state, change) => coalesced.push({ count: state.count, changes: change.changes }),
    });
    await nextTask(); // the load's render
    assert.deepEqual(coalesced, [{ count: 0, changes: 1 }]);
    let reads = 0; // every render needs a batch of lines read since the last one
    client.process.stdout?.on('data', () => reads++);
    const version = await burst(client);
    await mirror.sync(version);
    await nextTask();
    const renders = coalesced.slice(1);
    t.diagnostic(`${renders.length} renders for ${BURST} changes in ${reads} reads`);
    // Without the option: one render per change. (A loaded machine may make the server merge
    // some of the 1,000 changes into one patch, so changes are counted as patches applied.)
    assert.equal(immediate, eager.patches + 1);
    assert.equal(mirror.patches, eager.patches);
    assert.ok(renders.length >= 1 && renders.length <= reads, `${renders.length} > ${reads}`);
    assert.deepEqual(renders.at(-1), { count: BURST, changes: renders.at(-1)?.changes });
    assert.equal(renders.reduce((sum, render) => sum + (render.changes ?? 0), 0), mirror.patches);
    // Counts only rise: every render showed the latest state of its moment.
    assert.ok(renders.every((render, i) => i === 0 || render.count > renders[i - 1].count));
  });

  test("'frame': one render per frame, with the latest state", async (t) => {
    const client = await startServer(t);
    /** @type {(() => void)[]} */
    const frames = [];
    const saved = globalThis.requestAnimationFrame;
    /** @type {any} */ (globalThis).requestAnimationFrame = (/** @type {() => void} */ draw) =>
      frames.push(draw);
    t.after(() => {
      /** @type {any} */ (globalThis).requestAnimationFrame = saved;
    });
    /** @type {{ count: number, reason: string, changes: number | undefined }[]} */
    const renders = [];
    const mirror = await Mirror.open(client, 'counter', {
      coalesce: 'frame',
      onChange: (state, change) =>
        renders.push({ count: state.count, reason: change.reason, changes: change.changes }),
    });
    await mirror.sync(await burst(client));
    assert.equal(renders.length, 0); // nothing before the frame
    assert.equal(frames.length, 1); // one frame asked for, however many changes
    frames.shift()?.();
    // The load and every patch, in one render.
    assert.deepEqual(renders, [{ count: BURST, reason: 'patch', changes: mirror.patches + 1 }]);
    await mirror.sync((await client.dispatch('counter', { type: 'decrement' })).version);
    assert.equal(frames.length, 1);
    frames.shift()?.();
    assert.deepEqual(renders.at(-1), { count: BURST - 1, reason: 'patch', changes: 1 });
    frames.length = 0;
  });

  test('a scheduler of your own, and a render dropped by dispose', async (t) => {
    const client = await startServer(t);
    /** @type {(() => void)[]} */
    const flushes = [];
    let renders = 0;
    const mirror = await Mirror.open(client, 'counter', {
      coalesce: (flush) => flushes.push(flush),
      onChange: () => renders++,
    });
    await mirror.sync(await burst(client));
    assert.equal(flushes.length, 1);
    await mirror.dispose();
    flushes[0]();
    assert.equal(renders, 0);
    assert.deepEqual(mirror.state, { count: BURST }); // the state never waited for a render
    assert.throws(() => new Mirror(client, 'counter', { coalesce: /** @type {any} */ ('often') }),
      /coalesce: expected true, 'task', 'frame' or a function, got "often"/);
  });
});
