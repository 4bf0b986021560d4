// Checked with the JavaScript (allowJs, checkJs; tests/test_bindings.py): each value index.js
// exports has the type index.d.ts declares for it, as tsc infers it from the JavaScript and its
// JSDoc. A declaration that promises more than the code does fails here.
import * as client from '../src/client.js';
import * as errors from '../src/errors.js';
import * as lines from '../src/lines.js';
import * as mirror from '../src/mirror.js';
import * as patch from '../src/patch.js';
import * as pointer from '../src/pointer.js';
import type * as api from '../src/index.js';

export const declared: {
  spawn: (options?: api.SpawnOptions) => api.Client<any>;
  STDERR_TAIL_BYTES: typeof api.STDERR_TAIL_BYTES;
  Client: new (...args: ConstructorParameters<typeof api.Client>) => api.Client<any>;
  // mirror.js reaches into the client's internals, so it names the JavaScript class.
  Mirror: new (client: client.Client, store: string, options?: api.MirrorOptions) => api.Mirror;
  RPCError: typeof api.RPCError;
  TimeoutError: typeof api.TimeoutError;
  ServerExitedError: typeof api.ServerExitedError;
  ErrorCodes: typeof api.ErrorCodes;
  LineSplitter: typeof api.LineSplitter;
  // The declared result type is the caller's cast; the JavaScript's is unknown.
  applyPatch: typeof api.applyPatch<unknown>;
  jsonEqual: typeof api.jsonEqual;
  cloneJSON: typeof api.cloneJSON;
  JSONPatchError: typeof api.JSONPatchError;
  parsePointer: typeof api.parsePointer;
  formatPointer: typeof api.formatPointer;
  valueAt: typeof api.valueAt;
  JSONPointerError: typeof api.JSONPointerError;
} = {
  spawn: client.spawn,
  STDERR_TAIL_BYTES: client.STDERR_TAIL_BYTES,
  Client: client.Client,
  Mirror: mirror.Mirror,
  RPCError: errors.RPCError,
  TimeoutError: errors.TimeoutError,
  ServerExitedError: errors.ServerExitedError,
  ErrorCodes: errors.ErrorCodes,
  LineSplitter: lines.LineSplitter,
  applyPatch: patch.applyPatch,
  jsonEqual: patch.jsonEqual,
  cloneJSON: patch.cloneJSON,
  JSONPatchError: patch.JSONPatchError,
  parsePointer: pointer.parsePointer,
  formatPointer: pointer.formatPointer,
  valueAt: pointer.valueAt,
  JSONPointerError: pointer.JSONPointerError,
};
