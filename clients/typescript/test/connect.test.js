// End to end: connect({ path }) attaches to a core started with --listen (issue 12).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { connect, Mirror } from '../src/index.js';
import { serverBinary, startServer } from '../test-support/environment.js';

const binary = serverBinary();

describe('connect({ path })', { skip: binary.skip, timeout: 120_000 }, () => {
  test('an attached client sees the owner\'s stores and changes, and ends alone', async (t) => {
    const directory = mkdtempSync(join(tmpdir(), 'stateserver-connect-'));
    t.after(() => rmSync(directory, { recursive: true, force: true }));
    const path = join(directory, 'core.sock');
    const owner = await startServer(t, ['--listen', path]);
    await owner.request('store/list'); // the socket is bound before any input is read
    const guest = connect({ binary: binary.path, path, timeoutMs: 20_000 });
    t.after(() => { if (!guest.closed) guest.kill('SIGKILL'); });
    assert.equal((await guest.request('store/list')).attachedClients, 1);
    const mirror = await Mirror.open(guest, 'counter');
    const { version } = await owner.dispatch('counter', { type: 'set', value: 7 });
    await mirror.sync(version);
    assert.deepEqual(mirror.state, { count: 7 });
    assert.equal(await guest.close(), 0);
    // The guest's end ends only its connection: the core counts it out and goes on serving.
    const deadline = Date.now() + 30_000;
    while ((await owner.request('store/list')).attachedClients !== 0) {
      assert.ok(Date.now() < deadline, 'the guest is still counted 30 s after it closed');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.deepEqual(await owner.request('state/get', { store: 'counter' }), {
      store: 'counter', version, state: { count: 7 },
    });
    assert.equal(await owner.close(), 0);
  });
});
