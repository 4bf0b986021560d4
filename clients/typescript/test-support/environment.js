// Where the tests find the server binary and the shared conformance data, with the project's
// rule for missing inputs: fail when CI=true, otherwise skip with a clear reason.
// (Kept outside test/: node --test runs every .js file under a test/ directory.)

import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (clients/typescript/test-support/ is three levels below it). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const onCI = process.env.CI === 'true';

/**
 * The shared test data folder, or a reason to skip (throws when CI=true and it is missing).
 *
 * @returns {{ path: string, skip: false } | { path: null, skip: string }}
 */
export function testData() {
  const path = process.env.STATESERVER_TESTDATA || join(repoRoot, '..', 'shared', 'testdata');
  if (existsSync(join(path, 'json-patch-tests', 'tests.json'))) return { path, skip: false };
  const reason = `test data not found at ${path} (set STATESERVER_TESTDATA)`;
  if (onCI) throw new Error(`${reason}; CI=true, so this is a failure`);
  return { path: null, skip: reason };
}

/**
 * The stateserver binary for end-to-end tests, or a reason to skip (throws when CI=true and
 * there is none). `STATESERVER_BIN`, else the release build of this checkout.
 *
 * @returns {{ path: string, skip: false } | { path: null, skip: string }}
 */
export function serverBinary() {
  const path =
    process.env.STATESERVER_BIN || join(repoRoot, '.build', 'release', 'stateserver');
  if (existsSync(path)) return { path, skip: false };
  const reason =
    `stateserver binary not found at ${path} (run make release or set STATESERVER_BIN)`;
  if (onCI) throw new Error(`${reason}; CI=true, so this is a failure`);
  return { path: null, skip: reason };
}

/**
 * Starts `stateserver --ephemeral` (plus `args`) for one test and ends it after the test,
 * killing it if a test left it running.
 *
 * @param {import('node:test').TestContext} t
 * @param {string[]} [args]
 * @param {import('../src/index.js').SpawnOptions} [options]
 */
export async function startServer(t, args = [], options = {}) {
  const { spawn } = await import('../src/index.js');
  const binary = serverBinary();
  if (binary.skip) throw new Error(binary.skip); // callers skip their suite before this
  const client = spawn({
    binary: binary.path, args: ['--ephemeral', ...args], timeoutMs: 20_000, ...options,
  });
  t.after(async () => {
    if (!client.closed) {
      client.kill('SIGKILL');
      await client.exited;
    }
  });
  return client;
}

/**
 * Resolves with the first message the client reads that satisfies `predicate` (from now on).
 *
 * @param {import('../src/index.js').Client} client
 * @param {(message: any) => boolean} predicate
 * @returns {Promise<any>}
 */
export function nextMessage(client, predicate) {
  return new Promise((resolve, reject) => {
    const offMessage = client.on('message', (message) => {
      if (!predicate(message)) return;
      offMessage();
      offExit();
      resolve(message);
    });
    const offExit = client.on('exit', () => {
      offMessage();
      reject(new Error('the server exited before the awaited message'));
    });
  });
}
