// The errors a Client rejects with. Each carries what a caller needs to act on it.

/**
 * A JSON-RPC error response, with `code`, `message` and `data` exactly as the server sent them
 * (for invalid params, `data.pointer` names the offending field and `data.reason` says why).
 */
export class RPCError extends Error {
  /**
   * @param {{ code: number, message: string, data?: unknown }} error the response's `error`
   * @param {string} [method] the request's method, for the message
   */
  constructor(error, method) {
    const data = error.data === undefined ? '' : ` ${JSON.stringify(error.data)}`;
    super(`${method ? `${method}: ` : ''}${error.code} ${error.message}${data}`);
    this.name = 'RPCError';
    /** @type {number} */
    this.code = error.code;
    /** @type {string} the server's message, without the method and code this error's adds */
    this.rpcMessage = error.message;
    /** @type {any} */
    this.data = error.data;
  }
}

/** The request got no response in time (the server may still be working on it). */
export class TimeoutError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'TimeoutError';
  }
}

/** The server process ended (or never started) before it answered. */
export class ServerExitedError extends Error {
  /**
   * @param {string} message
   * @param {{ code: number | null, signal: string | null, cause?: unknown }} exit
   */
  constructor(message, exit) {
    super(message, exit.cause === undefined ? undefined : { cause: exit.cause });
    this.name = 'ServerExitedError';
    /** @type {number | null} */
    this.exitCode = exit.code;
    /** @type {string | null} */
    this.signal = exit.signal;
  }
}

/**
 * Standard and stateserver-specific JSON-RPC error codes (docs/reference/protocol.md, "Errors").
 */
export const ErrorCodes = Object.freeze({
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  unknownStore: -32001,
  unknownFeature: -32002,
  actionRefused: -32003,
  storeExists: -32004,
  notRecomputable: -32005,
  shuttingDown: -32010,
  requestCancelled: -32800,
});
