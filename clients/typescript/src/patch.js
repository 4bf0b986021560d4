// RFC 6902 JSON Patch, applied without touching the input: containers on the paths that change
// are copied once per application and everything else is shared with the original document.
// That makes an application atomic (a failing operation leaves the caller's document as it
// was) and lets UI code compare subtrees by identity to see what changed.

import {
  arrayIndex,
  describe,
  formatPointer,
  isObject,
  JSONPointerError,
  parsePointer,
} from './pointer.js';

/**
 * A patch that cannot be applied: a malformed operation, a path that names nothing, or a
 * failed `test`. `index` is the position of the failing operation in the patch (-1 when the
 * patch itself is not an array).
 */
export class JSONPatchError extends Error {
  /**
   * @param {string} message
   * @param {number} index
   * @param {unknown} [operation]
   */
  constructor(message, index, operation) {
    super(index >= 0 ? `operation ${index}: ${message}` : message);
    this.name = 'JSONPatchError';
    /** @type {number} */
    this.index = index;
    /** @type {unknown} */
    this.operation = operation;
  }
}

/**
 * Applies an RFC 6902 patch and returns the new document; `document` itself is never modified.
 *
 * All or nothing: if an operation fails, a `JSONPatchError` is thrown and nothing changed.
 * Unchanged subtrees of the result are the same objects as in `document`; never modify the
 * result in place if `document` is still in use (treat both as read-only).
 *
 * @example
 * applyPatch({ count: 1 }, [{ op: 'replace', path: '/count', value: 2 }]); // { count: 2 }
 * @template T
 * @param {T} document
 * @param {readonly unknown[]} patch
 * @returns {unknown}
 */
export function applyPatch(document, patch) {
  if (!Array.isArray(patch)) {
    throw new JSONPatchError(`a JSON Patch must be an array, got ${describe(patch)}`, -1, patch);
  }
  /** Containers created by this application, which it may modify in place. */
  const owned = new Set();
  /** @type {unknown} */
  let root = document;
  for (let index = 0; index < patch.length; index++) {
    const operation = patch[index];
    try {
      root = applyOperation(root, operation, owned);
    } catch (error) {
      if (error instanceof OperationError || error instanceof JSONPointerError) {
        throw new JSONPatchError(error.message, index, operation);
      }
      throw error;
    }
  }
  return root;
}

/**
 * Whether two JSON values are equal as RFC 6902's `test` defines it: numbers by value, arrays
 * element by element, objects member by member whatever their order.
 *
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    for (const key of keys) {
      if (!Object.hasOwn(b, key) || !jsonEqual(a[key], b[key])) return false;
    }
    return true;
  }
  return false;
}

/**
 * A deep copy of a JSON value.
 *
 * @template T
 * @param {T} value
 * @returns {T}
 */
export function cloneJSON(value) {
  if (Array.isArray(value)) return /** @type {T} */ (value.map(cloneJSON));
  if (isObject(value)) {
    /** @type {Record<string, unknown>} */
    const copy = {};
    for (const key of Object.keys(value)) setMember(copy, key, cloneJSON(value[key]));
    return /** @type {T} */ (copy);
  }
  return value;
}

/** A failure of one operation; `applyPatch` adds its index. */
class OperationError extends Error {}

/**
 * @param {unknown} root
 * @param {unknown} operation
 * @param {Set<unknown>} owned
 * @returns {unknown}
 */
function applyOperation(root, operation, owned) {
  if (!isObject(operation)) {
    throw new OperationError(`an operation must be an object, got ${describe(operation)}`);
  }
  const op = operation.op;
  if (typeof op !== 'string') {
    throw new OperationError(`'op' must be a string, got ${describe(op)}`);
  }
  const path = pointerMember(operation, 'path');
  switch (op) {
    case 'add':
      return add(root, path, valueMember(operation), owned);
    case 'remove':
      return remove(root, path, owned);
    case 'replace':
      return replace(root, path, valueMember(operation), owned);
    case 'move': {
      const from = pointerMember(operation, 'from');
      const value = lookUp(root, from);
      if (from.length === path.length && from.every((token, i) => token === path[i])) return root;
      if (from.length < path.length && from.every((token, i) => token === path[i])) {
        throw new OperationError(
          `cannot move '${formatPointer(from)}' into its own child '${formatPointer(path)}'`);
      }
      return add(remove(root, from, owned), path, value, owned);
    }
    case 'copy': {
      const from = pointerMember(operation, 'from');
      // A copy, not a second reference: a later operation may modify either place in place.
      return add(root, path, cloneJSON(lookUp(root, from)), owned);
    }
    case 'test': {
      const expected = valueMember(operation);
      const actual = lookUp(root, path);
      if (!jsonEqual(actual, expected)) {
        throw new OperationError(
          `test failed: the value at '${formatPointer(path)}' is ${JSON.stringify(actual)}, ` +
            `not ${JSON.stringify(expected)}`);
      }
      return root;
    }
    default:
      throw new OperationError(`unknown op '${op}'`);
  }
}

/**
 * @param {Record<string, unknown>} operation
 * @param {'path' | 'from'} name
 * @returns {string[]}
 */
function pointerMember(operation, name) {
  if (!Object.hasOwn(operation, name)) throw new OperationError(`missing '${name}'`);
  const pointer = operation[name];
  if (typeof pointer !== 'string') {
    throw new OperationError(`'${name}' must be a string, got ${describe(pointer)}`);
  }
  return parsePointer(pointer);
}

/**
 * @param {Record<string, unknown>} operation
 * @returns {unknown}
 */
function valueMember(operation) {
  if (!Object.hasOwn(operation, 'value')) {
    throw new OperationError(`'${operation.op}' needs a 'value'`);
  }
  return operation.value;
}

/**
 * The value at `tokens`; throws when there is none.
 *
 * @param {unknown} root
 * @param {readonly string[]} tokens
 * @returns {unknown}
 */
function lookUp(root, tokens) {
  let value = root;
  for (let i = 0; i < tokens.length; i++) {
    value = child(value, tokens[i], tokens, i);
  }
  return value;
}

/**
 * The member or element `token` of `container`; throws when there is none.
 *
 * @param {unknown} container
 * @param {string} token
 * @param {readonly string[]} tokens the whole path, for the message
 * @param {number} depth the position of `token` in `tokens`
 * @returns {unknown}
 */
function child(container, token, tokens, depth) {
  if (Array.isArray(container)) {
    const index = arrayIndex(token);
    if (index < 0 || index >= container.length) {
      throw new OperationError(
        `'${formatPointer(tokens.slice(0, depth + 1))}' is not an index of an array of ` +
          `${container.length} element(s)`);
    }
    return container[index];
  }
  if (isObject(container)) {
    if (!Object.hasOwn(container, token)) {
      throw new OperationError(`'${formatPointer(tokens.slice(0, depth + 1))}' does not exist`);
    }
    return container[token];
  }
  throw new OperationError(
    `'${formatPointer(tokens.slice(0, depth))}' is ${describe(container)}, not a container`);
}

/**
 * A container this application may modify: `value` itself if it made it, else a shallow copy.
 *
 * @param {unknown} value
 * @param {readonly string[]} tokens
 * @param {number} depth
 * @param {Set<unknown>} owned
 * @returns {unknown[] | Record<string, unknown>}
 */
function own(value, tokens, depth, owned) {
  if (owned.has(value)) return /** @type {unknown[] | Record<string, unknown>} */ (value);
  /** @type {unknown[] | Record<string, unknown>} */
  let copy;
  if (Array.isArray(value)) {
    copy = value.slice();
  } else if (isObject(value)) {
    copy = {};
    for (const key of Object.keys(value)) setMember(copy, key, value[key]);
  } else {
    throw new OperationError(
      `'${formatPointer(tokens.slice(0, depth))}' is ${describe(value)}, not a container`);
  }
  owned.add(copy);
  return copy;
}

/**
 * Copies (once) the containers from the root to the parent of the last token, so the caller
 * can change the parent in place. Returns the new root and that parent.
 *
 * @param {unknown} root
 * @param {readonly string[]} tokens at least one
 * @param {Set<unknown>} owned
 * @returns {[unknown, unknown[] | Record<string, unknown>]}
 */
function ownParent(root, tokens, owned) {
  const newRoot = own(root, tokens, 0, owned);
  let parent = newRoot;
  for (let depth = 0; depth < tokens.length - 1; depth++) {
    const token = tokens[depth];
    const next = own(child(parent, token, tokens, depth), tokens, depth + 1, owned);
    if (Array.isArray(parent)) parent[arrayIndex(token)] = next;
    else setMember(parent, token, next);
    parent = next;
  }
  return [newRoot, parent];
}

/**
 * @param {unknown} root
 * @param {readonly string[]} tokens
 * @param {unknown} value
 * @param {Set<unknown>} owned
 * @returns {unknown}
 */
function add(root, tokens, value, owned) {
  if (tokens.length === 0) return value;
  const [newRoot, parent] = ownParent(root, tokens, owned);
  const token = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    if (token === '-') {
      parent.push(value);
    } else {
      const index = arrayIndex(token);
      if (index < 0 || index > parent.length) {
        throw new OperationError(
          `cannot add at '${formatPointer(tokens)}': not an index from 0 to ${parent.length} ` +
            `or '-'`);
      }
      parent.splice(index, 0, value);
    }
  } else {
    setMember(parent, token, value);
  }
  return newRoot;
}

/**
 * @param {unknown} root
 * @param {readonly string[]} tokens
 * @param {Set<unknown>} owned
 * @returns {unknown}
 */
function remove(root, tokens, owned) {
  if (tokens.length === 0) throw new OperationError('cannot remove the whole document');
  const [newRoot, parent] = ownParent(root, tokens, owned);
  const token = tokens[tokens.length - 1];
  child(parent, token, tokens, tokens.length - 1); // throws when absent
  if (Array.isArray(parent)) parent.splice(arrayIndex(token), 1);
  else delete parent[token];
  return newRoot;
}

/**
 * @param {unknown} root
 * @param {readonly string[]} tokens
 * @param {unknown} value
 * @param {Set<unknown>} owned
 * @returns {unknown}
 */
function replace(root, tokens, value, owned) {
  if (tokens.length === 0) return value;
  const [newRoot, parent] = ownParent(root, tokens, owned);
  const token = tokens[tokens.length - 1];
  child(parent, token, tokens, tokens.length - 1); // throws when absent
  if (Array.isArray(parent)) parent[arrayIndex(token)] = value;
  else setMember(parent, token, value);
  return newRoot;
}

/**
 * Sets a member, also when its key is `__proto__` (a plain assignment would change the
 * object's prototype instead of adding a member, as JSON.parse does).
 *
 * @param {Record<string, unknown>} object
 * @param {string} key
 * @param {unknown} value
 */
function setMember(object, key, value) {
  if (key === '__proto__') {
    const descriptor = { value, writable: true, enumerable: true, configurable: true };
    Object.defineProperty(object, key, descriptor);
  } else {
    object[key] = value;
  }
}
