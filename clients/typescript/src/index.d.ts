// Hand-written declarations for the JavaScript in this folder (no build step: Node runs the .js
// files as they are). Keep them in step with the JSDoc of each function.

import type { ChildProcess } from 'node:child_process';
import type { Features as ReferenceFeatures } from './features.js';

// The reference app's typed bindings (`stateserver codegen --lang typescript`).
export * from './features.js';

/** Any JSON value. */
export type JSONValue =
  | null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };

/** An action or an event: `{type: "<case name>", <labelled fields>...}`. */
export interface Action {
  type: string;
  [field: string]: unknown;
}

/**
 * What store `S` takes: its feature's actions when `S` names a feature of `F` (a feature map such as
 * `Features` of `features.d.ts`, which `stateserver codegen --lang typescript` writes), else any
 * action.
 */
export type ActionOf<F, S extends string> = S extends keyof F
  ? F[S] extends { action: infer A } ? A : Action
  : Action;

/** Store `S`'s published state when `S` names a feature of `F`, else `any`. */
export type StateOf<F, S extends string> = S extends keyof F
  ? F[S] extends { state: infer T } ? T : any
  : any;

/** One RFC 6902 operation. */
export type PatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: JSONValue }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

/** `state/patch` params: operations turning the state at `from` into the state at `to`. */
export interface StatePatch {
  store: string;
  from: number;
  to: number;
  patch: PatchOperation[];
  /** The id of the dispatch request that caused it (the newest one after coalescing). */
  cause?: string | number | null;
  /** Present for a subscription to a subtree; operation paths are still from the root. */
  path?: string;
}

/** `store/event` params: a one-off event, never replayed. */
export interface StoreEvent {
  store: string;
  event: Action;
}

/** `store/closed` params. */
export interface StoreClosed {
  store: string;
  reason: string;
}

/** A notification from the server. */
export type Notification =
  | { jsonrpc: '2.0'; method: 'state/patch'; params: StatePatch }
  | { jsonrpc: '2.0'; method: 'store/event'; params: StoreEvent }
  | { jsonrpc: '2.0'; method: 'store/closed'; params: StoreClosed }
  | { jsonrpc: '2.0'; method: string; params?: any };

/** A JSON-RPC response (or any parsed line, for the `message` event). */
export type Message =
  | Notification
  | { jsonrpc: '2.0'; id: string | number | null; result?: any; error?: RPCErrorObject }
  | Message[];

export interface RPCErrorObject {
  code: number;
  message: string;
  data?: any;
}

export interface SpawnOptions {
  /** The program; default `$STATESERVER_BIN`, else `stateserver` from PATH. */
  binary?: string;
  /** Its arguments, e.g. `['--ephemeral']` (default none). */
  args?: readonly string[];
  /** Added to this process's environment. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Where the server's logs go; `'pipe'` (default) keeps the last 64 KiB for error messages. */
  stderr?: 'pipe' | 'inherit' | 'ignore';
  /** Default timeout of requests in ms (default 30,000; 0 = none). */
  timeoutMs?: number;
}

export interface RequestOptions {
  /** Rejects with `TimeoutError` (and cancels on the server) after this long; 0 = never. */
  timeoutMs?: number;
  /** Aborting sends `$/cancelRequest` and rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface DispatchOptions extends RequestOptions {
  /** `'settled'`: answer once every effect the action started has finished. */
  wait?: 'reduced' | 'settled';
  /** Fire and forget: no response; resolves with undefined at once. */
  notify?: boolean;
  /**
   * Hears the progress the action's effects report (`$/progress`): `begin`, `report`s, then
   * `end`, which always comes once the work ended (alone, `done: 0`, when nothing reported).
   * Needs `initialize()` first. Aborting `signal` after the response cancels that work.
   */
  onProgress?: (value: ProgressValue) => void;
}

/** One `$/progress` value. */
export interface ProgressValue {
  kind: 'begin' | 'report' | 'end';
  done: number;
  total?: number;
  message?: string;
  /** On `end`: whether the work was cancelled before it finished. */
  cancelled?: boolean;
}

/** What a client speaks (`initialize`'s `capabilities`); each member optional. */
export interface ClientCapabilities {
  /** Reads `$/progress` (default false on the server's side: none is sent). */
  progress?: boolean;
  /** Sends and reads batches (default true). */
  batch?: boolean;
  /** Can drive a virtual clock with `clock/advance` (default true). */
  clock?: boolean;
}

/** `initialize`'s params. */
export interface InitializeParams {
  protocolVersion?: number;
  client?: { name?: string; version?: string };
  subscribe?: 'all' | 'none';
  clock?: 'real' | 'virtual';
  /** Default: `CLIENT_CAPABILITIES` (progress, batch and clock). */
  capabilities?: ClientCapabilities;
}

/** What this client speaks by default. */
export declare const CLIENT_CAPABILITIES: Readonly<Required<ClientCapabilities>>;

/** `dispatch` result. */
/** One entry of a store's history (`history/get`). */
export interface HistoryEntry {
  seq: number;
  kind: 'action' | 'events' | 'rewind' | 'skip';
  /** For a rewind: the version restored. */
  to?: number;
  /** For a skip: the seq of the action it turned off or on. */
  entry?: number;
  /** For an action: whether `history/skip` turned it off; for a skip: what it set. */
  skipped?: boolean;
  version: number;
  action: Action | null;
  /** `request`: the client request (`client`: the attached client that sent it); `action`:
   * the seq of the action whose effect sent it. */
  origin: { request?: string | number | null; client?: number; action?: number };
  patch: PatchOperation[];
  events: { type: string; [field: string]: unknown }[];
  /** ISO 8601 with milliseconds: the stamp the reducer read. */
  at: string;
  durationUs: number;
  effects?: {
    effect: number;
    kind: 'run' | 'debounce' | 'concatenate';
    action: number | null;
    status: 'running' | 'finished' | 'cancelled' | 'failed';
    startedAt: string;
    durationUs: number;
  }[];
}

/** `history/get` result. */
export interface HistoryResult {
  store: string;
  /** The oldest version whose state history still holds. */
  first: number;
  version: number;
  entries: HistoryEntry[];
}

/** `store/fork` result: the new store, at the version it was forked at. */
export interface ForkResult {
  store: string;
  feature: string;
  /** The store it was forked from. */
  from: string;
  version: number;
  state: unknown;
}

/** `state/diff` result: `patch` turns `store`'s state into `other`'s. */
export interface DiffResult {
  store: string;
  version: number;
  other: string;
  otherVersion: number;
  patch: PatchOperation[];
}

/** One entry `state/blame` names: a history entry, the value's pointer then, and who set it
 * off (nearest first, ending with an origin as in `history/get`). */
export interface BlameTouch extends Omit<HistoryEntry, 'effects'> {
  path: string;
  /** The entry added the value: nothing older touched it. */
  created: boolean;
  chain: (
    | { seq: number; version?: number; action?: Action | null; held?: false;
        effects?: { effect: number; kind: string }[] }
    | { request?: string | number | null; client?: number }
  )[];
}

/** `state/blame` result. */
export interface BlameResult {
  store: string;
  path: string;
  version: number;
  first: number;
  /** The entry that last changed the value; null when no entry held did. */
  last: BlameTouch | null;
  /** Older entries that touched it, newest first. */
  before: BlameTouch[];
  /** True when the oldest touch created the value. */
  complete: boolean;
}

export interface DispatchResult {
  store: string;
  version: number;
}

/** `state/get` and `state/subscribe` result. */
export interface StateResult<S = any> {
  store: string;
  version: number;
  state: S;
}

/** A function that removes a listener; also callable as `.dispose()` (VS Code's Disposable). */
export interface Unsubscribe {
  (): void;
  dispose(): void;
}

export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

export interface ListenerError {
  error: unknown;
  event: string;
  message: unknown;
}

export interface ClientEvents {
  notification: (message: Notification) => void;
  'state/patch': (params: StatePatch) => void;
  'store/event': (params: StoreEvent) => void;
  'store/closed': (params: StoreClosed) => void;
  message: (message: Message) => void;
  stderr: (text: string) => void;
  exit: (status: ExitStatus) => void;
  listenerError: (error: unknown, event: string, message: unknown) => void;
  protocolError: (error: unknown, line: string) => void;
}

/** How much of the server's stderr a client keeps. */
export const STDERR_TAIL_BYTES: number;

/** Starts a stateserver process; `F` types its stores by feature (default: the reference app). */
export function spawn<F = ReferenceFeatures>(options?: SpawnOptions): Client<F>;

export interface ConnectOptions extends Omit<SpawnOptions, 'args'> {
  /** The socket of a core started with `--listen`. */
  path: string;
}

/** Attaches to a running stateserver's `--listen` socket (through `stateserver attach`). */
export function connect<F = ReferenceFeatures>(options: ConnectOptions): Client<F>;

/**
 * One stateserver process and its JSON-RPC connection. `F` maps feature names to their types:
 * a store named after a feature takes only that feature's actions.
 */
export class Client<F = ReferenceFeatures> {
  constructor(child: ChildProcess, options?: { timeoutMs?: number; name?: string });
  readonly process: ChildProcess;
  /** Default timeout of requests in ms; 0 = none. */
  timeoutMs: number;
  /** The latest (up to 100) exceptions thrown by listeners; reading went on. */
  readonly listenerErrors: ListenerError[];
  /** Settles when the process has ended and its output was read. */
  readonly exited: Promise<ExitStatus>;
  readonly pid: number | undefined;
  /** Whether the process has ended. */
  readonly closed: boolean;

  request(
    method: 'state/get' | 'state/subscribe',
    params: { store: string; path?: string },
    options?: RequestOptions,
  ): Promise<StateResult>;
  request<R = any>(method: string, params?: unknown, options?: RequestOptions): Promise<R>;
  notify(method: string, params?: unknown): void;
  /**
   * Moves a virtual clock (`--clock virtual`) by `ms`; resolves with the new time in ms once
   * every effect due by then ran and its patches arrived.
   */
  advance(ms: number, options?: RequestOptions): Promise<number>;
  /**
   * Tells the server what this client speaks and resolves with its answer; `capabilities`
   * then holds what both speak.
   */
  initialize(params?: InitializeParams, options?: RequestOptions): Promise<any>;
  /** What both sides speak, from the last `initialize()`. */
  capabilities: Record<string, unknown> | undefined;
  /**
   * The `progressToken`s whose `onProgress` is still kept: each leaves with its `end` (always
   * sent once the work ended, alone when nothing reported). Empty once every such work ended.
   */
  readonly progressTokens: string[];
  dispatch<S extends string>(
    store: S, action: ActionOf<F, S>, options?: DispatchOptions & { notify?: false },
  ): Promise<DispatchResult>;
  dispatch<S extends string>(
    store: S, action: ActionOf<F, S>, options: DispatchOptions & { notify: true },
  ): Promise<undefined>;
  on<E extends keyof ClientEvents>(event: E, listener: ClientEvents[E]): Unsubscribe;
  on(event: string, listener: (params: any) => void): Unsubscribe;
  onNotification(listener: (message: Notification) => void): Unsubscribe;
  /** Stops reading stdout: the server's output backs up and it coalesces patches. */
  pause(): void;
  resume(): void;
  /** Resolves once every line sent so far was handed to the server's stdin pipe. */
  drained(): Promise<void>;
  /** The last 64 KiB of the server's stderr (when it is a pipe). */
  stderrText(): string;
  /** Ends stdin; resolves with the exit code (null if a signal ended it). */
  close(options?: { timeoutMs?: number }): Promise<number | null>;
  /** Sends `shutdown`, then closes; resolves with the exit code. */
  shutdown(options?: { timeoutMs?: number }): Promise<number | null>;
  kill(signal?: NodeJS.Signals): boolean;
  /** `history/get`: entries above version `since`, oldest first. */
  history(
    store: string, options?: { since?: number; limit?: number } & RequestOptions,
  ): Promise<HistoryResult>;
  /** `state/get` with a version: the state as it was then. */
  stateAt(store: string, version: number, options?: { path?: string } & RequestOptions):
    Promise<StateResult>;
  /** `store/rewind`: the state at `version` becomes current as a new version. */
  rewind(store: string, version: number, options?: RequestOptions): Promise<DispatchResult>;
  /** `history/skip`: turns the action that made `version` off or on and recomputes the state. */
  skip(store: string, version: number, skipped: boolean, options?: RequestOptions):
    Promise<DispatchResult>;
  /** `store/fork`: a new store whose state is `store`'s at `version` (default: now). */
  fork(
    store: string, options?: { version?: number; as?: string; persist?: boolean } & RequestOptions,
  ): Promise<ForkResult>;
  /** `state/diff`: the patch turning `store`'s state into `other`'s. */
  diff(store: string, other: string, options?: RequestOptions): Promise<DiffResult>;
  /** `state/blame`: the entry that last changed the value at `path`, and those before it. */
  blame(store: string, path: string, options?: { limit?: number } & RequestOptions):
    Promise<BlameResult>;
}

export interface MirrorOptions<S = any> {
  /** A JSON Pointer: mirror only this subtree (default `''`, the whole state). */
  path?: string;
  /**
   * Send `state/subscribe` (default). `false`: only `state/get`, for a store whose patches
   * already come (`initialize` subscribes every store's root by default).
   */
  subscribe?: boolean;
  onChange?: (state: S, change: MirrorChange) => void;
  /**
   * Render at most once per task (`true` or `'task'`), per frame (`'frame'`:
   * `requestAnimationFrame`, else every 16 ms), or when your scheduler calls `flush`; each
   * render gets the latest state and `change.changes`, the number of changes it covers.
   * Default: every change at once.
   */
  coalesce?: boolean | 'task' | 'frame' | ((flush: () => void) => void);
}

export interface MirrorChange {
  reason: 'load' | 'patch' | 'resync';
  /** The store version the mirror now reflects. */
  version: number;
  exists: boolean;
  from?: number;
  to?: number;
  patch?: PatchOperation[];
  /** With `coalesce`: how many changes this render stands for (the fields are the latest's). */
  changes?: number;
}

/** A local copy of a store's state (or a subtree), kept current from `state/patch`. */
export class Mirror<S = any> {
  constructor(client: Client<any>, store: string, options?: MirrorOptions<S>);
  /** The whole state of store `N`, typed by its feature when `N` names one. */
  static open<F, N extends string>(
    client: Client<F>, store: N, options?: MirrorOptions<StateOf<F, N>> & { path?: '' },
  ): Promise<Mirror<StateOf<F, N>>>;
  /** A subtree (`path`): its type is the caller's to say. */
  static open<S = any>(
    client: Client<any>, store: string, options?: MirrorOptions<S>,
  ): Promise<Mirror<S>>;
  /** Read-only: unchanged parts are shared with the previous state. */
  readonly state: S | undefined;
  /** Whether the mirrored value exists (a path's subtree can be removed and come back). */
  readonly exists: boolean;
  /** The newest store version the mirror reflects (-1 before the first state). */
  readonly version: number;
  readonly store: string;
  readonly path: string;
  readonly ready: Promise<Mirror<S>>;
  readonly patches: number;
  readonly coalesced: number;
  readonly resyncs: number;
  readonly closedReason: string | null;
  readonly lastPatchError: unknown;
  onChange(listener: (state: S | undefined, change: MirrorChange) => void): Unsubscribe;
  /** Resolves with the state once the mirror reflects `version` (default: the store's now). */
  sync(version?: number, options?: { timeoutMs?: number }): Promise<S | undefined>;
  resync(): Promise<void>;
  dispose(options?: { unsubscribe?: boolean }): Promise<void>;
}

export class RPCError extends Error {
  constructor(error: RPCErrorObject, method?: string);
  readonly code: number;
  /** The server's own message. */
  readonly rpcMessage: string;
  /** For invalid params: `{pointer, reason}`. */
  readonly data: any;
}

export class TimeoutError extends Error {
  constructor(message: string);
}

export class ServerExitedError extends Error {
  constructor(message: string, exit: { code: number | null; signal: string | null; cause?: unknown });
  readonly exitCode: number | null;
  readonly signal: string | null;
}

export const ErrorCodes: Readonly<{
  parseError: -32700;
  invalidRequest: -32600;
  methodNotFound: -32601;
  invalidParams: -32602;
  internalError: -32603;
  unknownStore: -32001;
  unknownFeature: -32002;
  actionRefused: -32003;
  storeExists: -32004;
  notRecomputable: -32005;
  shuttingDown: -32010;
  requestCancelled: -32800;
}>;

/** Splits a byte stream into lines (`\n` or `\r\n`), decoding UTF-8 only once a line is whole. */
export class LineSplitter {
  push(chunk: Uint8Array): string[];
  end(): string | null;
  readonly pendingBytes: number;
}

export class JSONPatchError extends Error {
  constructor(message: string, index: number, operation?: unknown);
  /** The failing operation's position (-1: the patch is not an array). */
  readonly index: number;
  readonly operation: unknown;
}

/** Applies an RFC 6902 patch atomically and returns the new document; the input is untouched. */
export function applyPatch<T = JSONValue>(document: unknown, patch: readonly unknown[]): T;
/** RFC 6902 `test` equality. */
export function jsonEqual(a: unknown, b: unknown): boolean;
export function cloneJSON<T>(value: T): T;

export class JSONPointerError extends Error {
  constructor(message: string);
}
/** RFC 6901: `'/a~1b/0'` → `['a/b', '0']`. */
export function parsePointer(pointer: string): string[];
export function formatPointer(tokens: readonly (string | number)[]): string;
/** The value at `pointer`, or undefined. */
export function valueAt(document: unknown, pointer: string): unknown;
