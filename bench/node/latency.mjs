// dispatch -> onChange latency: the Node client (Mirror) against raw child_process, in
// interleaved steps on one machine so drift hits both alike, in 5 repeats with fresh servers.
// Exits 1 when the median repeat has the client's p99 more than 2x raw's.
import { spawn as spawnProcess } from 'node:child_process';

import { Mirror, spawn } from '../../clients/typescript/src/index.js';

const scale = Number(process.env.BENCH_SCALE ?? 1);
const REPEATS = 5;
const SAMPLES = Math.max(200, Math.round(4_000 * scale));
const WARMUP = 200;
const TARGET = 2;
const binary = process.env.STATESERVER_BIN ?? 'stateserver';
const increment = { type: 'increment' };

/** The client: dispatch, resolve when the mirror's onChange shows the new count. */
async function clientSetup() {
  const client = spawn({ binary, args: ['--ephemeral'] });
  /** @type {(() => void) | null} */
  let changed = null;
  let rendered = 0;
  const mirror = await Mirror.open(client, 'counter', {
    onChange: (state) => {
      rendered = state.count; // the "render"
      changed?.();
    },
  });
  return {
    async once() {
      const seen = new Promise((resolve) => (changed = resolve));
      const start = process.hrtime.bigint();
      client.dispatch('counter', increment, { timeoutMs: 0 });
      await seen;
      return Number(process.hrtime.bigint() - start) / 1000;
    },
    check: () => rendered === mirror.state.count,
    close: () => client.close(),
  };
}

/** Raw child_process: the same line out, the same work on the way back, nothing else. */
async function rawSetup() {
  const child = spawnProcess(binary, ['--ephemeral'], { stdio: ['pipe', 'pipe', 'ignore'] });
  let state = { count: 0 };
  let rendered = 0;
  let pending = '';
  let nextId = 1;
  /** @type {(() => void) | null} */
  let changed = null;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    const lines = (pending + chunk).split('\n');
    pending = /** @type {string} */ (lines.pop());
    for (const line of lines) {
      const message = JSON.parse(line);
      if (message.method !== 'state/patch' || message.params.store !== 'counter') continue;
      for (const op of message.params.patch) {
        if (op.op === 'replace' && op.path === '/count') state = { ...state, count: op.value };
      }
      rendered = state.count;
      changed?.();
    }
  });
  return {
    async once() {
      const seen = new Promise((resolve) => (changed = resolve));
      const start = process.hrtime.bigint();
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'dispatch',
        params: { store: 'counter', action: increment } }) + '\n');
      await seen;
      return Number(process.hrtime.bigint() - start) / 1000;
    },
    check: () => rendered === state.count,
    close: () => new Promise((resolve) => {
      child.on('close', resolve);
      child.stdin.end();
    }),
  };
}

/** @param {number[]} values @param {number} q */
function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** One repeat: fresh servers for both sides, warmed up, then SAMPLES interleaved steps. */
async function repeat() {
  const client = await clientSetup();
  const raw = await rawSetup();
  for (let i = 0; i < WARMUP; i++) {
    await client.once();
    await raw.once();
  }
  /** @type {number[]} */
  const clientTimes = [];
  /** @type {number[]} */
  const rawTimes = [];
  // One of each per step, the order alternating: a load spike from the machine's other work
  // lands on both sides alike, so the ratio holds even when the absolute figures do not.
  for (let step = 0; step < SAMPLES; step++) {
    if (step % 2 === 0) {
      clientTimes.push(await client.once());
      rawTimes.push(await raw.once());
    } else {
      rawTimes.push(await raw.once());
      clientTimes.push(await client.once());
    }
  }
  if (!client.check() || !raw.check()) throw new Error('a render missed the last state');
  await client.close();
  await raw.close();
  return { client: figures(clientTimes), raw: figures(rawTimes) };
}

/** @param {number[]} times */
function figures(times) {
  return { p50: quantile(times, 0.5), p90: quantile(times, 0.9), p99: quantile(times, 0.99) };
}

const f = (/** @type {number} */ us) => `${us.toFixed(0)} µs`.padStart(8);
console.log(`dispatch -> onChange, ${REPEATS} repeats of ${SAMPLES} interleaved steps`);
/** @type {number[]} */
const ratios = [];
for (let i = 0; i < REPEATS; i++) {
  const { client: c, raw: r } = await repeat();
  const ratio = c.p99 / r.p99;
  ratios.push(ratio);
  console.log(`  repeat ${i + 1}: client p50 ${f(c.p50)} p90 ${f(c.p90)} p99 ${f(c.p99)} | raw ` +
    `p50 ${f(r.p50)} p90 ${f(r.p90)} p99 ${f(r.p99)} | p50 ${(c.p50 / r.p50).toFixed(2)}x ` +
    `p99 ${ratio.toFixed(2)}x`);
}
// The median repeat: one repeat whose server process the machine starved says little.
const median = quantile(ratios, 0.5);
console.log(`  client p99 / raw p99, median of ${REPEATS}: ${median.toFixed(2)}x ` +
  `(target <= ${TARGET}x)`);
process.exit(median <= TARGET ? 0 : 1);
