// Splits a byte stream into lines. Lines are cut on the byte 0x0A and decoded only once whole,
// so a chunk boundary inside a multi-byte UTF-8 character (or inside a line) changes nothing.

const NEWLINE = 0x0a;
const RETURN = 0x0d;

/**
 * Collects chunks and returns the complete lines they finish, without their `\n` or `\r\n`.
 *
 * @example
 * const lines = new LineSplitter();
 * lines.push(Buffer.from('{"a":')); // []
 * lines.push(Buffer.from('1}\n{')); // ['{"a":1}']
 */
export class LineSplitter {
  /** @type {Uint8Array[]} the pieces of the line not yet ended */
  #pending = [];
  #decoder = new TextDecoder('utf-8', { ignoreBOM: true });

  /**
   * @param {Uint8Array} chunk
   * @returns {string[]} the lines this chunk completes, in order
   */
  push(chunk) {
    /** @type {string[]} */
    const lines = [];
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, end);
      const line = this.#pending.length === 0 ? piece : concat([...this.#pending, piece]);
      this.#pending = [];
      lines.push(this.#decode(line));
      start = end + 1;
    }
    // Copy the rest: the caller may reuse its buffer (a Buffer from a pool is shared).
    if (start < chunk.length) this.#pending.push(chunk.slice(start));
    return lines;
  }

  /**
   * The last line when the stream ended without a newline, or `null`.
   *
   * @returns {string | null}
   */
  end() {
    if (this.#pending.length === 0) return null;
    const line = concat(this.#pending);
    this.#pending = [];
    return this.#decode(line);
  }

  /** How many bytes wait for their line's end. */
  get pendingBytes() {
    return this.#pending.reduce((sum, piece) => sum + piece.length, 0);
  }

  /**
   * @param {Uint8Array} line
   * @returns {string}
   */
  #decode(line) {
    const crlf = line.length > 0 && line[line.length - 1] === RETURN;
    return this.#decoder.decode(crlf ? line.subarray(0, line.length - 1) : line);
  }
}

/**
 * @param {Uint8Array[]} pieces
 * @returns {Uint8Array}
 */
function concat(pieces) {
  const length = pieces.reduce((sum, piece) => sum + piece.length, 0);
  const joined = new Uint8Array(length);
  let offset = 0;
  for (const piece of pieces) {
    joined.set(piece, offset);
    offset += piece.length;
  }
  return joined;
}
