// RFC 6901 JSON Pointers: parsing, formatting, and the array-index rule shared by patch.js.

/**
 * A pointer that cannot be parsed, or that names no value in a document.
 */
export class JSONPointerError extends Error {
  /**
   * @param {string} message
   */
  constructor(message) {
    super(message);
    this.name = 'JSONPointerError';
  }
}

/**
 * Splits an RFC 6901 pointer into its unescaped reference tokens.
 *
 * `""` is the whole document (no tokens); `"/"` is the member with the empty key (`[""]`);
 * `~1` stands for `/` and `~0` for `~` (decoded in that order, so `~01` is `~1`).
 *
 * @example
 * parsePointer('/a~1b/0'); // ['a/b', '0']
 * @param {string} pointer
 * @returns {string[]}
 */
export function parsePointer(pointer) {
  if (typeof pointer !== 'string') {
    throw new JSONPointerError(`a JSON Pointer must be a string, got ${describe(pointer)}`);
  }
  if (pointer === '') return [];
  if (pointer[0] !== '/') {
    throw new JSONPointerError(`JSON Pointer '${pointer}' does not start with '/'`);
  }
  const tokens = pointer.slice(1).split('/');
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (!token.includes('~')) continue;
    // A '~' must be followed by '0' or '1'; anything else is not a valid escape (RFC 6901 §3).
    if (/~(?![01])/.test(token)) {
      throw new JSONPointerError(`JSON Pointer '${pointer}' has an invalid '~' escape`);
    }
    tokens[i] = token.replace(/~1/g, '/').replace(/~0/g, '~');
  }
  return tokens;
}

/**
 * The pointer naming `tokens`, escaping `~` and `/`.
 *
 * @example
 * formatPointer(['a/b', '0']); // '/a~1b/0'
 * @param {readonly (string | number)[]} tokens
 * @returns {string}
 */
export function formatPointer(tokens) {
  let text = '';
  for (const token of tokens) {
    text += '/' + String(token).replace(/~/g, '~0').replace(/\//g, '~1');
  }
  return text;
}

/**
 * The array index a token names, or -1 when it is not one: RFC 6901 allows only `0` or digits
 * without a leading zero (so `01`, `1e0`, `-1` and `+1` are not indices).
 *
 * @param {string} token
 * @returns {number}
 */
export function arrayIndex(token) {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return -1;
  const index = Number(token);
  return Number.isSafeInteger(index) ? index : -1;
}

/**
 * The value `pointer` names in `document`, or `undefined` when there is none.
 *
 * @example
 * valueAt({ items: [{ id: 'a' }] }, '/items/0/id'); // 'a'
 * @param {unknown} document
 * @param {string} pointer
 * @returns {unknown}
 */
export function valueAt(document, pointer) {
  let value = document;
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(value)) {
      const index = arrayIndex(token);
      if (index < 0 || index >= value.length) return undefined;
      value = value[index];
    } else if (isObject(value) && Object.hasOwn(value, token)) {
      value = /** @type {Record<string, unknown>} */ (value)[token];
    } else {
      return undefined;
    }
  }
  return value;
}

/**
 * Whether `value` is a JSON object (not an array, not null).
 *
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
export function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A short description of a value for error messages.
 *
 * @param {unknown} value
 * @returns {string}
 */
export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (value === undefined) return 'nothing';
  return `${typeof value} ${JSON.stringify(value)}`;
}
