// A Client owns one stateserver process: it writes JSON-RPC lines to its stdin, splits its
// stdout into messages, drains its stderr (a pipe nobody reads fills after ~64 KiB of logs
// and then blocks the server), and matches responses to the requests that carried their id.

import { spawn as spawnProcess } from 'node:child_process';

import { RPCError, ServerExitedError, TimeoutError } from './errors.js';
import { LineSplitter } from './lines.js';

/** How much of the server's stderr a client keeps for error messages. */
export const STDERR_TAIL_BYTES = 64 * 1024;
/** How many listener failures a client keeps in `listenerErrors`. */
const KEPT_LISTENER_ERRORS = 100;
/**
 * What this client speaks, as `initialize()` tells the server by default: it reads
 * `$/progress`, sends and reads batches, and can drive a virtual clock (`advance`).
 */
export const CLIENT_CAPABILITIES = Object.freeze({ progress: true, batch: true, clock: true });

/**
 * Internal: sends a request and calls `onResponse(response)` synchronously when its response
 * line is read, before any later line (a Mirror needs the state it fetched to take effect
 * exactly there in the message stream, not a microtask later). Not part of the public API.
 */
export const requestInOrder = Symbol('stateserver.requestInOrder');
/** Internal: reports an exception thrown by a caller's callback (see `listenerErrors`). */
export const reportListenerError = Symbol('stateserver.reportListenerError');

/**
 * Starts a stateserver process and returns its Client.
 *
 * The program is `options.binary`, else `$STATESERVER_BIN`, else `stateserver` from `PATH`.
 * `options.env` is added to this process's environment.
 *
 * @example
 * const client = spawn({ args: ['--ephemeral'] });
 * await client.dispatch('counter', { type: 'increment' });
 * await client.close();
 * @param {import('./index.js').SpawnOptions} [options]
 * @returns {Client}
 */
export function spawn(options = {}) {
  const binary = options.binary ?? process.env.STATESERVER_BIN ?? 'stateserver';
  const child = spawnProcess(binary, options.args ?? [], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', options.stderr ?? 'pipe'],
    windowsHide: true,
  });
  return new Client(child, { timeoutMs: options.timeoutMs, name: binary });
}

/**
 * Attaches to a running stateserver started with `--listen`, through `stateserver attach PATH`;
 * the Client works as with `spawn()`, and `close()` ends only this connection.
 *
 * @example
 * const client = connect({ path: '/run/user/1000/stateserver/4242.sock' });
 * await client.request('store/list');
 * @param {import('./index.js').ConnectOptions} options
 * @returns {Client}
 */
export function connect(options) {
  return spawn({ ...options, args: ['attach', options.path] });
}

/**
 * One stateserver process and its JSON-RPC connection. Make one with `spawn()`.
 *
 * Listeners (`on`, `onNotification`) run synchronously as each line is read, in order. An
 * exception a listener throws is kept in `listenerErrors` (and passed to `listenerError`
 * listeners); the client goes on reading.
 */
export class Client {
  /** @type {import('node:child_process').ChildProcess} */
  process;
  /** @type {number} the default `timeoutMs` of requests; 0 = none */
  timeoutMs;
  /** @type {{ error: unknown, event: string, message: unknown }[]} the latest listener failures */
  listenerErrors = [];
  /**
   * Settles when the process has ended and its output was read.
   * @type {Promise<{ code: number | null, signal: string | null }>}
   */
  exited;

  /**
   * What the server and this client both speak, from the last `initialize()` (undefined
   * before one).
   * @type {Record<string, unknown> | undefined}
   */
  capabilities;

  #name;
  #nextId = 1;
  #nextProgress = 1;
  /**
   * The progress callbacks of dispatches, by token, until their `end`.
   * @type {Map<string, (value: any) => void>}
   */
  #progress = new Map();
  /**
   * Requests awaiting their response, by id.
   * @type {Map<number, {
   *   method: string, resolve: (r: any) => void, reject: (e: unknown) => void,
   *   cleanup: () => void, onResponse?: (r: any) => void }>}
   */
  #pending = new Map();
  /** @type {Map<string, Set<(...args: any[]) => void>>} */
  #listeners = new Map();
  /** @type {Buffer[]} */
  #stderrTail = [];
  #stderrBytes = 0;
  #stderrDecoder = new TextDecoder('utf-8');
  /** @type {{ code: number | null, signal: string | null, cause?: unknown } | null} */
  #exit = null;

  /**
   * @param {import('node:child_process').ChildProcess} child with piped stdin and stdout
   * @param {{ timeoutMs?: number, name?: string }} [options]
   */
  constructor(child, options = {}) {
    if (!child.stdin || !child.stdout) {
      throw new TypeError('the process needs piped stdin and stdout');
    }
    this.process = child;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.#name = options.name ?? 'stateserver';
    const lines = new LineSplitter();
    child.stdout.on('data', (chunk) => {
      for (const line of lines.push(chunk)) this.#receive(line);
    });
    child.stdout.on('end', () => {
      const last = lines.end();
      if (last !== null) this.#receive(last);
    });
    child.stderr?.on('data', (chunk) => this.#keepStderr(chunk));
    // Writing to a process that has exited fails with EPIPE; the exit itself is reported.
    child.stdin.on('error', () => {});
    this.exited = new Promise((resolve) => {
      child.on('error', (error) => {
        // Only a failure to start (or to kill) lands here; a start failure ends the client.
        if (child.pid !== undefined) return;
        this.#ended({ code: null, signal: null, cause: error }, resolve);
      });
      child.on('close', (code, signal) => this.#ended({ code, signal }, resolve));
    });
  }

  /** The process id (undefined if the process could not start). */
  get pid() {
    return this.process.pid;
  }

  /**
   * The `progressToken`s whose `onProgress` this client still keeps: each leaves with its
   * `end`, which the server always sends once the work ended (alone when nothing reported), or
   * when its dispatch was refused or the process ended. Empty once every such work ended.
   * @returns {string[]}
   */
  get progressTokens() {
    return [...this.#progress.keys()];
  }

  /** Whether the process has ended. */
  get closed() {
    return this.#exit !== null;
  }

  /**
   * Sends a request and resolves with its result; an error response rejects with `RPCError`.
   *
   * `timeoutMs` (default `client.timeoutMs`, 0 = none) rejects with `TimeoutError`, quoting the
   * end of the server's stderr, and cancels the request on the server. Aborting `signal` sends
   * `$/cancelRequest` and rejects with the signal's reason. Every pending request rejects with
   * `ServerExitedError` when the process ends.
   *
   * @example
   * const { version } = await client.request('state/get', { store: 'counter' });
   * @param {string} method
   * @param {unknown} [params]
   * @param {import('./index.js').RequestOptions} [options]
   * @returns {Promise<any>}
   */
  request(method, params, options = {}) {
    return this[requestInOrder](method, params, options);
  }

  /**
   * @param {string} method
   * @param {unknown} params
   * @param {import('./index.js').RequestOptions & { onResponse?: (response: any) => void }} options
   * @returns {Promise<any>}
   */
  [requestInOrder](method, params, options) {
    const { signal, onResponse } = options;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#exit) return Promise.reject(this.#exitError(`before '${method}' was sent`));
    const id = this.#nextId++;
    /** @type {string} */
    let line;
    try {
      line = encode(params === undefined
        ? { jsonrpc: '2.0', id, method }
        : { jsonrpc: '2.0', id, method, params });
    } catch (error) {
      return Promise.reject(error); // params JSON cannot express (a BigInt, a cycle)
    }
    return new Promise((resolve, reject) => {
      /** @type {NodeJS.Timeout | undefined} */
      let timer;
      const abort = () => {
        this.#pending.delete(id);
        cleanup();
        this.notify('$/cancelRequest', { id });
        reject(signal?.reason);
      };
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
      };
      this.#pending.set(id, { method, resolve, reject, cleanup, onResponse });
      signal?.addEventListener('abort', abort, { once: true });
      if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => {
          this.#pending.delete(id);
          cleanup();
          this.notify('$/cancelRequest', { id });
          reject(new TimeoutError(
            `${this.#name} did not answer '${method}' (id ${id}) within ${timeoutMs} ms` +
              this.#stderrHint()));
        }, timeoutMs);
      }
      this.process.stdin?.write(line);
    });
  }

  /**
   * Sends a notification (no response). Ignored once the process has ended. Throws a
   * TypeError, as JSON.stringify does, for params JSON cannot express.
   *
   * @param {string} method
   * @param {unknown} [params]
   */
  notify(method, params) {
    if (this.#exit) return;
    this.process.stdin?.write(encode(params === undefined
      ? { jsonrpc: '2.0', method }
      : { jsonrpc: '2.0', method, params }));
  }

  /**
   * Sends an action to a store; resolves with `{store, version}`. `wait: 'settled'` resolves
   * once every effect the action started has finished. `notify: true` sends it fire-and-forget
   * (resolves with undefined at once; a refused action is only logged on the server's stderr).
   *
   * @example
   * await client.dispatch('cart', { type: 'setQuantity', id: 'sku-7', quantity: 2 });
   * @param {string} store
   * @param {{ type: string, [field: string]: unknown }} action
   * @param {import('./index.js').DispatchOptions} [options]
   * @returns {Promise<any>}
   */
  dispatch(store, action, options = {}) {
    /** @type {Record<string, unknown>} */
    const params = { store, action };
    if (options.wait !== undefined) params.wait = options.wait;
    const { onProgress } = options;
    if (onProgress !== undefined) {
      if (this.capabilities?.progress !== true) {
        return Promise.reject(new Error(
          'onProgress needs a server that agreed to send progress: await client.initialize() ' +
            'first (its capabilities include progress by default)'));
      }
      params.progressToken = `progress-${this.#nextProgress++}`;
      return this.#dispatchWithProgress(params, onProgress, options);
    }
    if (options.notify) {
      this.notify('dispatch', params);
      return Promise.resolve(undefined);
    }
    return this.request('dispatch', params, options);
  }

  /**
   * A dispatch whose progress goes to `onProgress` until its `end`. Aborting `signal` cancels
   * the request while it is pending and, after its response, the work still reporting.
   *
   * @param {Record<string, unknown>} params with `progressToken`
   * @param {(value: any) => void} onProgress
   * @param {import('./index.js').DispatchOptions} options
   * @returns {Promise<any>}
   */
  #dispatchWithProgress(params, onProgress, options) {
    const token = /** @type {string} */ (params.progressToken);
    const { signal } = options;
    /** @type {number | undefined} */
    let id;
    const cancel = () => {
      if (id !== undefined) this.notify('$/cancelRequest', { id });
    };
    const stop = () => {
      this.#progress.delete(token);
      signal?.removeEventListener('abort', cancel);
    };
    this.#progress.set(token, (value) => {
      if (value?.kind === 'end') stop();
      onProgress(value);
    });
    signal?.addEventListener('abort', cancel, { once: true });
    const answered = this[requestInOrder]('dispatch', params, {
      ...options,
      onResponse: (response) => {
        id = response.id;
        // A refused dispatch started nothing, so no `end` comes; every other one gets its
        // `end` once its work ended, even when nothing reported, which drops the entry.
        if (response.error !== undefined) stop();
      },
    });
    // The id is known only from the response; an abort before it is sent by the request itself.
    return answered.catch((/** @type {unknown} */ error) => {
      // Aborted: the work is being cancelled, and its `end` (cancelled) is still to come.
      if (!signal?.aborted) stop();
      throw error;
    });
  }

  /**
   * `initialize`: tells the server what this client speaks (`capabilities`, by default
   * progress, batches and the clock) and resolves with its answer, whose `capabilities` (also
   * kept in `client.capabilities`) say what both speak. Other params: `subscribe`, `clock`,
   * `client`, `protocolVersion`.
   *
   * @example
   * await client.initialize({ subscribe: 'none' });
   * await client.dispatch('notes', { type: 'sync' }, { onProgress: (p) => console.log(p) });
   * @param {import('./index.js').InitializeParams} [params]
   * @param {import('./index.js').RequestOptions} [options]
   * @returns {Promise<any>}
   */
  async initialize(params = {}, options = {}) {
    const result = await this.request(
      'initialize', { ...params, capabilities: params.capabilities ?? CLIENT_CAPABILITIES },
      options);
    this.capabilities = result.capabilities;
    return result;
  }

  /**
   * Moves the virtual clock of a server started with `--clock virtual` (or initialized with
   * `{ clock: 'virtual' }`) by `ms`; resolves once every effect due by then has run and its
   * patches have arrived (they come before the response). Resolves with the new `now` in ms.
   *
   * @example
   * await client.dispatch('users', { type: 'search', query: 'carla' });
   * await client.advance(300); // the debounce ran; the search's patches were delivered
   * @param {number} ms
   * @param {import('./index.js').RequestOptions} [options]
   * @returns {Promise<number>}
   */
  async advance(ms, options = {}) {
    const { now } = await this.request('clock/advance', { ms }, options);
    return now;
  }

  /**
   * Calls `listener` for each message of a kind, in order of arrival; returns a function that
   * removes it (also callable as `.dispose()`). Events: `notification` (every server
   * notification), `state/patch`, `store/event`, `store/closed` (their params), `message`
   * (every parsed message, responses included), `stderr` (text), `exit` ({code, signal}),
   * `listenerError` (error, event, message), `protocolError` (error, line).
   *
   * @param {string} event
   * @param {(...args: any[]) => void} listener
   * @returns {(() => void) & { dispose(): void }}
   */
  on(event, listener) {
    const set = this.#listeners.get(event) ?? new Set();
    this.#listeners.set(event, set);
    // A wrapper per registration, so adding the same function twice needs two removals.
    const entry = (/** @type {any[]} */ ...args) => listener(...args);
    set.add(entry);
    const off = () => void set.delete(entry);
    return Object.assign(off, { dispose: off });
  }

  /**
   * Calls `listener(message)` for every notification from the server (`{method, params}`).
   *
   * @param {(message: { jsonrpc: '2.0', method: string, params?: any }) => void} listener
   */
  onNotification(listener) {
    return this.on('notification', listener);
  }

  /** The last 64 KiB the server wrote on stderr (when stderr is a pipe, the default). */
  stderrText() {
    return Buffer.concat(this.#stderrTail).toString('utf8');
  }

  /**
   * Ends the server's stdin (a normal shutdown: it drains effects, flushes, exits) and resolves
   * with its exit code (null if a signal ended it). After `timeoutMs` (default 10 s) the
   * process is killed and the promise rejects with `TimeoutError`.
   *
   * @param {{ timeoutMs?: number }} [options]
   * @returns {Promise<number | null>}
   */
  async close(options = {}) {
    this.process.stdin?.end();
    const timeoutMs = options.timeoutMs ?? 10_000;
    /** @type {NodeJS.Timeout | undefined} */
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => {
        this.process.kill('SIGKILL');
        reject(new TimeoutError(
          `${this.#name} did not exit within ${timeoutMs} ms of the end of its input; killed` +
            this.#stderrHint()));
      }, timeoutMs);
    });
    try {
      return (await Promise.race([this.exited, timeout])).code;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Sends `shutdown` (the server drains and answers), then closes stdin; resolves with the
   * exit code.
   *
   * @param {{ timeoutMs?: number }} [options]
   * @returns {Promise<number | null>}
   */
  async shutdown(options = {}) {
    await this.request('shutdown', undefined, options);
    return this.close(options);
  }

  /**
   * Stops reading the server's stdout until `resume()`: its output then fills the pipe and the
   * server coalesces the patches it cannot write (docs/reference/protocol.md), so a busy client can catch up
   * later with fewer, merged patches. Requests still pending get their answers after `resume()`.
   */
  pause() {
    this.process.stdout?.pause();
  }

  /** Reads the server's stdout again after `pause()`. */
  resume() {
    this.process.stdout?.resume();
  }

  /**
   * Resolves once every line sent so far has been handed to the server's stdin pipe (the server
   * may not have read the last pipe-full yet): backpressure for a client that sends bursts.
   *
   * @returns {Promise<void>}
   */
  drained() {
    const stdin = this.process.stdin;
    if (!stdin || this.#exit) return Promise.resolve();
    // Writes complete in order: the callback of an empty write runs after every earlier one.
    return new Promise((resolve) => stdin.write('', () => resolve()));
  }

  /**
   * Sends a signal to the process (default SIGTERM, which the server treats as end of input).
   *
   * @param {NodeJS.Signals} [signal]
   */
  kill(signal = 'SIGTERM') {
    return this.process.kill(signal);
  }

  /**
   * @param {string} event
   * @param {any[]} args
   */
  #emit(event, ...args) {
    const set = this.#listeners.get(event);
    if (!set || set.size === 0) return;
    if (set.size === 1) {
      // The usual case (one mirror, one listener) without copying the set for every line.
      const [listener] = set;
      try {
        listener(...args);
      } catch (error) {
        this[reportListenerError](error, event, args[0]);
      }
      return;
    }
    for (const listener of [...set]) {
      try {
        listener(...args);
      } catch (error) {
        this[reportListenerError](error, event, args[0]);
      }
    }
  }

  /**
   * @param {unknown} error
   * @param {string} event
   * @param {unknown} message
   */
  [reportListenerError](error, event, message) {
    this.listenerErrors.push({ error, event, message });
    if (this.listenerErrors.length > KEPT_LISTENER_ERRORS) this.listenerErrors.shift();
    if (event === 'listenerError') return; // a failing error listener must not loop
    this.#emit('listenerError', error, event, message);
  }

  /** @param {any} params a `$/progress` notification's params */
  #reportProgress(params) {
    const callback = this.#progress.get(params?.token);
    if (callback === undefined) return;
    try {
      callback(params.value);
    } catch (error) {
      this[reportListenerError](error, '$/progress', params);
    }
  }

  /** @param {string} line */
  #receive(line) {
    if (line.trim() === '') return;
    let message;
    try {
      message = JSON.parse(line);
    } catch (error) {
      this.#emit('protocolError', error, line);
      return;
    }
    this.#emit('message', message);
    for (const item of Array.isArray(message) ? message : [message]) {
      if (typeof item !== 'object' || item === null) continue;
      if (typeof item.method === 'string') {
        if (item.method === '$/progress') this.#reportProgress(item.params);
        this.#emit('notification', item);
        this.#emit(item.method, item.params);
      } else if (typeof item.id === 'number') {
        this.#settle(item);
      }
    }
  }

  /** @param {any} response */
  #settle(response) {
    const pending = this.#pending.get(response.id);
    if (!pending) return; // cancelled, timed out, or not ours
    this.#pending.delete(response.id);
    pending.cleanup();
    if (pending.onResponse) {
      try {
        pending.onResponse(response);
      } catch (error) {
        this[reportListenerError](error, 'response', response);
      }
    }
    if (response.error) pending.reject(new RPCError(response.error, pending.method));
    else pending.resolve(response.result);
  }

  /** @param {Buffer} chunk */
  #keepStderr(chunk) {
    this.#stderrTail.push(chunk);
    this.#stderrBytes += chunk.length;
    while (this.#stderrBytes - this.#stderrTail[0].length >= STDERR_TAIL_BYTES) {
      this.#stderrBytes -= /** @type {Buffer} */ (this.#stderrTail.shift()).length;
    }
    if (this.#stderrBytes > STDERR_TAIL_BYTES) {
      const excess = this.#stderrBytes - STDERR_TAIL_BYTES;
      this.#stderrTail[0] = this.#stderrTail[0].subarray(excess);
      this.#stderrBytes -= excess;
    }
    if (this.#listeners.get('stderr')?.size) {
      this.#emit('stderr', this.#stderrDecoder.decode(chunk, { stream: true }));
    }
  }

  #stderrHint() {
    const tail = this.stderrText().slice(-2000).trimEnd();
    return tail ? `; its stderr ends with:\n${tail}` : '; it wrote nothing on stderr';
  }

  /** @param {string} when */
  #exitError(when) {
    const exit = this.#exit ?? { code: null, signal: null };
    const how = exit.cause
      ? `could not start (${/** @type {Error} */ (exit.cause).message})`
      : exit.signal ? `was ended by ${exit.signal}` : `exited with code ${exit.code}`;
    return new ServerExitedError(`${this.#name} ${how} ${when}${this.#stderrHint()}`, exit);
  }

  /**
   * @param {{ code: number | null, signal: string | null, cause?: unknown }} exit
   * @param {(exit: { code: number | null, signal: string | null }) => void} resolve
   */
  #ended(exit, resolve) {
    if (this.#exit) return;
    this.#exit = exit;
    this.#progress.clear(); // no more progress can come
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.cleanup();
      pending.reject(this.#exitError(`before answering '${pending.method}' (id ${id})`));
    }
    resolve({ code: exit.code, signal: exit.signal });
    this.#emit('exit', { code: exit.code, signal: exit.signal });
  }

  // History and time travel (the server keeps `--history N` entries per store).

  /**
   * A store's recent history: entries oldest first above version `since`, and `first`, the
   * oldest version whose state it still holds.
   *
   * @example
   * const { first, entries } = await client.history('counter', { since: 0, limit: 100 });
   * @param {string} store
   * @param {{ since?: number, limit?: number } & import('./index.js').RequestOptions} [options]
   * @returns {Promise<import('./index.js').HistoryResult>}
   */
  history(store, options = {}) {
    /** @type {Record<string, unknown>} */
    const params = { store };
    if (options.since !== undefined) params.since = options.since;
    if (options.limit !== undefined) params.limit = options.limit;
    return this.request('history/get', params, options);
  }

  /**
   * The published state of a store as it was at `version` (or the value at `options.path`).
   *
   * @param {string} store
   * @param {number} version
   * @param {{ path?: string } & import('./index.js').RequestOptions} [options]
   * @returns {Promise<import('./index.js').StateResult>}
   */
  stateAt(store, version, options = {}) {
    /** @type {Record<string, unknown>} */
    const params = { store, version };
    if (options.path !== undefined) params.path = options.path;
    return this.request('state/get', params, options);
  }

  /**
   * Makes the state at `version` current again, as a new version (effects in flight are
   * cancelled; subscribers get one ordinary patch).
   *
   * @param {string} store
   * @param {number} version
   * @param {import('./index.js').RequestOptions} [options]
   * @returns {Promise<import('./index.js').DispatchResult>}
   */
  rewind(store, version, options = {}) {
    return this.request('store/rewind', { store, version }, options);
  }

  /**
   * `history/skip`: turns the action that made `version` off (`skipped` true) or on again, and
   * recomputes the state from the actions that remain, as a new version (effects are not run
   * again; subscribers get one ordinary patch).
   *
   * @example
   * await client.skip('counter', 2, true);   // as if the action of version 2 never happened
   * @param {string} store
   * @param {number} version
   * @param {boolean} skipped
   * @param {import('./index.js').RequestOptions} [options]
   * @returns {Promise<import('./index.js').DispatchResult>}
   */
  skip(store, version, skipped, options = {}) {
    return this.request('history/skip', { store, version, skipped }, options);
  }

  /**
   * `store/fork`: a new store of the same feature whose state is `store`'s at
   * `options.version` (the current one by default); not persisted unless `options.persist`.
   *
   * @example
   * const { store: sandbox } = await client.fork('counter', { version: 2, as: 'sandbox' });
   * @param {string} store
   * @param {{ version?: number, as?: string, persist?: boolean } & import('./index.js').RequestOptions} [options]
   * @returns {Promise<import('./index.js').ForkResult>}
   */
  fork(store, options = {}) {
    /** @type {Record<string, unknown>} */
    const params = { store };
    if (options.version !== undefined) params.version = options.version;
    if (options.as !== undefined) params.as = options.as;
    if (options.persist !== undefined) params.persist = options.persist;
    return this.request('store/fork', params, options);
  }

  /**
   * `state/diff`: the RFC 6902 patch turning `store`'s published state into `other`'s.
   *
   * @param {string} store
   * @param {string} other
   * @param {import('./index.js').RequestOptions} [options]
   * @returns {Promise<import('./index.js').DiffResult>}
   */
  diff(store, other, options = {}) {
    return this.request('state/diff', { store, other }, options);
  }

  /**
   * `state/blame`: the history entry that last changed the value at `path`, with its origin
   * chain, and the entries before it that touched it.
   *
   * @example
   * const { last } = await client.blame('counter', '/count');
   * @param {string} store
   * @param {string} path
   * @param {{ limit?: number } & import('./index.js').RequestOptions} [options]
   * @returns {Promise<import('./index.js').BlameResult>}
   */
  blame(store, path, options = {}) {
    /** @type {Record<string, unknown>} */
    const params = { store, path };
    if (options.limit !== undefined) params.limit = options.limit;
    return this.request('state/blame', params, options);
  }
}

/**
 * One message as an NDJSON line (JSON.stringify escapes every newline inside strings).
 *
 * @param {unknown} message
 * @returns {string}
 */
function encode(message) {
  return JSON.stringify(message) + '\n';
}
