// A local copy of a store's state (or of one subtree), kept current by applying the server's
// `state/patch` notifications in version order, with the protocol's resync rule on a gap.

import { reportListenerError, requestInOrder } from './client.js';
import { ErrorCodes, RPCError, TimeoutError } from './errors.js';
import { renderSchedule } from './coalesce.js';
import { applyPatch } from './patch.js';
import { parsePointer } from './pointer.js';

/**
 * Mirrors the state of `store`, or of the subtree at `options.path`, on `client`.
 *
 * It subscribes (`state/subscribe`, or only `state/get` with `subscribe: false`), which returns
 * the state and its version; then each `state/patch` of that subscription is applied when its
 * `from` is the mirror's version. Any other `from` is a gap: the mirror fetches the state again
 * with `state/get` (`resyncs` counts it) and carries on. `ready` settles once the first state
 * arrived; `sync(version)` waits for a version. `state` is read-only: patches share the
 * unchanged parts of the previous state, so compare subtrees by identity to see what changed.
 *
 * `coalesce` renders at most once per task (`'task'` or `true`: after the current batch of
 * lines, on `setImmediate`) or per frame (`'frame'`: `requestAnimationFrame`, else 16 ms), or
 * on a schedule of your own (a function that calls `flush` later): a burst of 1,000 patches
 * then makes one `onChange` call with the latest state, its `change.changes` counting what it
 * stands for. `state`, `version` and `sync` never wait for a render.
 *
 * A subtree can go away (a `remove` of the path: `exists` false, `state` undefined) and come
 * back. A path subscription gets no patch for versions that left its subtree alone, so its
 * `version` is the newest store version the mirror is known to reflect.
 *
 * @example
 * const cart = await Mirror.open(client, 'cart', { onChange: (state) => render(state) });
 * const { version } = await client.dispatch('cart', { type: 'remove', id: 'sku-7' });
 * await cart.sync(version); // cart.state now reflects the action
 */
export class Mirror {
  /** @type {any} */
  state = undefined;
  /** Whether the mirrored value exists (a path's subtree can be removed). */
  exists = false;
  /** Patches applied, and how many of them were coalesced (`to > from + 1`). */
  patches = 0;
  coalesced = 0;
  /** How many times a gap made the mirror fetch the state again. */
  resyncs = 0;
  /** @type {string | null} why the store went away (`store/closed`), or null */
  closedReason = null;
  /** @type {unknown} why the last patch that did not fit the copy failed (then it resynced) */
  lastPatchError = null;
  /** @type {Promise<Mirror>} */
  ready;

  #client;
  #store;
  #path;
  #subscribe;
  /** The newest store version the state is known to reflect (-1 before the first fetch). */
  #current = -1;
  /** The oldest `from` a patch may have: the last patch's `to`, or 0 after a `state/get`. */
  #floor = 0;
  /** After a fetch found the path absent, whatever `from` the next patch (its add) has. */
  #absentUnknown = false;
  #loaded = false;
  #fetching = false;
  /** @type {unknown} the error of the last failed fetch */
  #failure = null;
  /** @type {Set<(state: any, change: any) => void>} */
  #changeListeners = new Set();
  /** @type {Set<() => void>} */
  #waiters = new Set();
  /** @type {() => void} */
  #stopListening;
  /** With `coalesce`: when to call the change listeners, else null (at once). */
  /** @type {((flush: () => void) => void) | null} */
  #schedule;
  /** The newest change not yet rendered (coalescing), and how many changes it stands for. */
  /** @type {any} */
  #unrendered = null;
  #unrenderedCount = 0;
  #disposed = false;

  /**
   * @param {import('./client.js').Client} client
   * @param {string} store
   * @param {import('./index.js').MirrorOptions} [options]
   */
  constructor(client, store, options = {}) {
    this.#client = client;
    this.#store = store;
    this.#path = options.path ?? '';
    parsePointer(this.#path); // throws on a malformed path before anything is sent
    this.#subscribe = options.subscribe ?? true;
    this.#schedule = renderSchedule(options.coalesce);
    if (options.onChange) this.onChange(options.onChange);
    const offPatch = client.on('state/patch', (params) => this.#onPatch(params));
    const offClosed = client.on('store/closed', (params) => {
      if (params?.store !== this.#store) return;
      this.closedReason = String(params.reason);
      this.#wake();
    });
    const offExit = client.on('exit', () => this.#wake());
    this.#stopListening = () => {
      offPatch();
      offClosed();
      offExit();
    };
    this.ready = this.#fetch(this.#subscribe ? 'state/subscribe' : 'state/get', true).then(
      () => this,
    );
    // `ready` still rejects for whoever awaits it; nobody awaiting it must not crash Node.
    this.ready.catch(() => {});
  }

  /**
   * Creates a mirror and resolves once it holds the store's state.
   *
   * @param {import('./client.js').Client} client
   * @param {string} store
   * @param {import('./index.js').MirrorOptions} [options]
   * @returns {Promise<Mirror>}
   */
  static open(client, store, options) {
    return new Mirror(client, store, options).ready;
  }

  /** The store's id. */
  get store() {
    return this.#store;
  }

  /** The mirrored path (`''`: the whole state). */
  get path() {
    return this.#path;
  }

  /** The newest store version the mirror reflects (-1 until the first state arrived). */
  get version() {
    return this.#current;
  }

  /**
   * Calls `listener(state, change)` after every change of `state`: the first load, each patch
   * (`change.patch`, `from`, `to`) and each resync. Returns a function that removes it. An
   * exception it throws is kept in the client's `listenerErrors`.
   *
   * @param {(state: any, change: import('./index.js').MirrorChange) => void} listener
   */
  onChange(listener) {
    const entry = (/** @type {any} */ state, /** @type {any} */ change) => listener(state, change);
    this.#changeListeners.add(entry);
    const off = () => void this.#changeListeners.delete(entry);
    return Object.assign(off, { dispose: off });
  }

  /**
   * Resolves with the state once the mirror reflects store version `version` (default: the
   * store's version at the time of the call, asked with `state/get`). Rejects with
   * `TimeoutError` after `timeoutMs` (default the client's), or when the store closes or the
   * process ends first.
   *
   * @param {number} [version]
   * @param {{ timeoutMs?: number }} [options]
   * @returns {Promise<any>}
   */
  async sync(version, options = {}) {
    const timeoutMs = options.timeoutMs ?? this.#client.timeoutMs;
    const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
    await this.ready;
    // A path's subscription gets nothing for changes elsewhere, and a caller may ask for the
    // current version: then `state/get` tells how new the store is. Its answer follows every
    // patch written before it, which the mirror has applied when it arrives.
    if (version === undefined || (this.#path !== '' && this.#current < version)) {
      const reached = await this.#probe(deadline);
      version = version ?? reached;
    }
    const target = version;
    return new Promise((resolve, reject) => {
      /** @type {NodeJS.Timeout | undefined} */
      let timer;
      const check = () => {
        /** @type {unknown} */
        let failure = null;
        if (this.#loaded && !this.#fetching && this.#current >= target) {
          finish();
          resolve(this.state);
          return;
        }
        if (this.closedReason !== null) {
          failure = new Error(`store '${this.#store}' was closed (${this.closedReason})`);
        } else if (this.#client.closed) {
          failure = new Error(`the server exited; the mirror of '${this.#store}${this.#path}' ` +
            `is at version ${this.#current}, not ${target}`);
        } else if (this.#failure !== null && !this.#fetching) {
          failure = this.#failure;
        }
        if (failure !== null) {
          finish();
          reject(failure);
        }
      };
      const finish = () => {
        clearTimeout(timer);
        this.#waiters.delete(check);
      };
      if (deadline !== Infinity) {
        timer = setTimeout(() => {
          finish();
          reject(new TimeoutError(`the mirror of '${this.#store}${this.#path}' is stuck at ` +
            `version ${this.#current} < ${target}`));
        }, Math.max(0, deadline - Date.now()));
      }
      this.#waiters.add(check);
      check();
    });
  }

  /**
   * Fetches the state again with `state/get` (what a gap does by itself).
   *
   * @returns {Promise<void>}
   */
  resync() {
    this.resyncs++;
    return this.#fetch('state/get', false);
  }

  /**
   * Stops following patches. With `unsubscribe: true` it also sends `state/unsubscribe` (which
   * ends the patches of this store and path for every mirror on this client).
   *
   * @param {{ unsubscribe?: boolean }} [options]
   */
  async dispose(options = {}) {
    this.#stopListening();
    this.#disposed = true; // a render still scheduled is dropped
    if (options.unsubscribe && !this.#client.closed) {
      await this.#client.request('state/unsubscribe', this.#params());
    }
  }

  #params() {
    return this.#path === '' ? { store: this.#store } : { store: this.#store, path: this.#path };
  }

  /**
   * @param {'state/subscribe' | 'state/get'} method
   * @param {boolean} first
   */
  async #fetch(method, first) {
    this.#fetching = true;
    let absent = false;
    try {
      await this.#client[requestInOrder](method, this.#params(), {
        // Runs when the response line is read: every patch before it was already handled.
        onResponse: (/** @type {any} */ response) => {
          if (response.error) {
            // A resync of a path that is gone: the subtree is absent until a patch adds it.
            absent = response.error.code === ErrorCodes.invalidParams;
            if (first || this.#path === '' || !absent) return;
            this.#fetching = false;
            this.#failure = null;
            this.#absentUnknown = true;
            this.#set(undefined, false, { reason: 'resync' });
            return;
          }
          const { version, state } = response.result;
          this.#fetching = false;
          this.#failure = null;
          this.#absentUnknown = false;
          this.#loaded = true;
          this.#current = Math.max(this.#current, version);
          // A subscription's next patch starts at its version; after a plain `state/get` a path's
          // next patch may start at any version since its subtree last changed.
          this.#floor = method === 'state/subscribe' || this.#path === '' ? version : 0;
          this.#set(state, true, { reason: first ? 'load' : 'resync', version });
        },
      });
    } catch (error) {
      if (absent && !first && this.#path !== '') return; // handled above: not a failure
      this.#fetching = false;
      this.#failure = error;
      this.#wake();
      throw error;
    }
  }

  /**
   * The store's version now, from `state/get`; the mirror's own version when the path is
   * absent (its removal was applied) or a gap must be repaired first.
   *
   * @param {number} deadline
   * @returns {Promise<number>}
   */
  async #probe(deadline) {
    const timeoutMs = deadline === Infinity ? 0 : Math.max(1, deadline - Date.now());
    /** @type {number} */
    let reached = this.#current;
    try {
      await this.#client[requestInOrder]('state/get', this.#params(), {
        timeoutMs,
        onResponse: (/** @type {any} */ response) => {
          if (response.error) {
            if (response.error.code !== ErrorCodes.invalidParams || this.#path === '') return;
            if (this.exists && !this.#fetching) this.#gap(); // the mirror missed a removal
            return;
          }
          reached = response.result.version;
          if (this.#fetching || this.#path === '') return; // a root mirror waits for its patches
          if (!this.exists) {
            this.#gap(); // the mirror missed the path's return
          } else {
            this.#current = Math.max(this.#current, reached);
            this.#wake();
          }
        },
      });
    } catch (error) {
      if (!(error instanceof RPCError)) throw error;
    }
    return reached;
  }

  /** @param {any} params */
  #onPatch(params) {
    if (params?.store !== this.#store || (params.path ?? '') !== this.#path) return;
    if (!this.#loaded && !this.#absentUnknown) return; // the first fetch's answer covers it
    const { from, to, patch } = params;
    if (to <= this.#current && !this.#absentUnknown) return; // already reflected
    if (!this.#absentUnknown && (from < this.#floor || from > this.#current)) {
      if (!this.#fetching) this.#gap();
      return;
    }
    let document;
    try {
      // The whole state always exists, so it needs neither the wrapper nor rebased paths (which
      // cost an allocation per operation on the hot path; the garbage showed in p99).
      document = this.#path === ''
        ? { root: applyPatch(this.state, patch) }
        : /** @type {any} */ (applyPatch(this.exists ? { root: this.state } : {}, patch.map(
          (/** @type {any} */ op) => this.#rebase(op))));
    } catch (error) {
      // The patch does not fit the copy: it is not the state the server thinks it is.
      this.lastPatchError = error;
      if (!this.#fetching) this.#gap();
      return;
    }
    this.#absentUnknown = false;
    this.#loaded = true;
    this.#current = to;
    this.#floor = to;
    this.patches++;
    if (to > from + 1) this.coalesced++;
    const exists = Object.hasOwn(document, 'root');
    this.#set(document.root, exists, { reason: 'patch', from, to, patch });
  }

  /**
   * Patch paths are from the store's root; the copy sits under a wrapper key so that replacing
   * or removing the whole subtree is an ordinary operation.
   *
   * @param {any} op
   */
  #rebase(op) {
    const rebased = { ...op, path: this.#rebasePointer(op.path) };
    if (typeof op.from === 'string') rebased.from = this.#rebasePointer(op.from);
    return rebased;
  }

  /** @param {unknown} pointer */
  #rebasePointer(pointer) {
    const text = String(pointer);
    const inside = text === this.#path || text.startsWith(this.#path + '/');
    if (!inside) throw new Error(`patch path '${text}' is outside the mirrored '${this.#path}'`);
    return '/root' + text.slice(this.#path.length);
  }

  #gap() {
    this.resync().catch(() => {}); // a failure reaches waiters through #failure
  }

  /**
   * @param {any} state
   * @param {boolean} exists
   * @param {any} change
   */
  #set(state, exists, change) {
    this.state = state;
    this.exists = exists;
    if (this.#changeListeners.size > 0) {
      const full = { ...change, version: this.#current, exists };
      if (this.#schedule === null) {
        this.#render(state, full);
      } else {
        if (this.#unrendered === null) this.#schedule(() => this.#flush());
        this.#unrendered = full;
        this.#unrenderedCount++;
      }
    }
    this.#wake();
  }

  /** A scheduled render: the latest state, once, for every change since the last one. */
  #flush() {
    const change = this.#unrendered;
    if (change === null || this.#disposed) return;
    const changes = this.#unrenderedCount;
    this.#unrendered = null;
    this.#unrenderedCount = 0;
    this.#render(this.state, { ...change, version: this.#current, exists: this.exists, changes });
  }

  /**
   * @param {any} state
   * @param {any} change
   */
  #render(state, change) {
    for (const listener of this.#changeListeners) {
      try {
        listener(state, change);
      } catch (error) {
        this.#client[reportListenerError](error, 'mirror.onChange', change);
      }
    }
  }

  #wake() {
    if (this.#waiters.size === 0) return; // the common case: nobody is in sync()
    for (const check of [...this.#waiters]) check();
  }
}

