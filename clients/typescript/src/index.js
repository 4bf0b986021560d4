// stateserver's Node client: spawn the server, talk JSON-RPC to it, mirror its stores.
// Types: index.d.ts beside this file.

export { CLIENT_CAPABILITIES, Client, connect, spawn, STDERR_TAIL_BYTES } from './client.js';
export { ErrorCodes, RPCError, ServerExitedError, TimeoutError } from './errors.js';
export { LineSplitter } from './lines.js';
export { Mirror } from './mirror.js';
export { applyPatch, cloneJSON, JSONPatchError, jsonEqual } from './patch.js';
export { formatPointer, JSONPointerError, parsePointer, valueAt } from './pointer.js';
