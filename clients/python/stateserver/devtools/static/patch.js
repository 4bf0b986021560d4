// RFC 6902 applied in the page: an imported recording's views are rebuilt step by step from the
// state it opened with and each entry's patch, as a live core's clients mirror them.

const unescape = (token) => token.replaceAll('~1', '/').replaceAll('~0', '~');
const tokens = (pointer) => (pointer === '' ? [] : pointer.slice(1).split('/').map(unescape));

function parentOf(document, path) {
  const parts = tokens(path);
  const last = parts.pop();
  let node = document;
  for (const part of parts) {
    if (node === null || typeof node !== 'object' || !(part in node)) throw new Error(`no value at ${path}`);
    node = node[part];
  }
  if (node === null || typeof node !== 'object') throw new Error(`no container for ${path}`);
  return { node, last };
}

function get(document, path) {
  let node = document;
  for (const part of tokens(path)) {
    if (node === null || typeof node !== 'object' || !(part in node)) throw new Error(`no value at ${path}`);
    node = node[part];
  }
  return node;
}

function remove(document, path) {
  const { node, last } = parentOf(document, path);
  const value = node[last];
  if (Array.isArray(node)) node.splice(Number(last), 1);
  else delete node[last];
  return value;
}

function add(document, path, value) {
  if (path === '') return value;
  const { node, last } = parentOf(document, path);
  if (Array.isArray(node)) node.splice(last === '-' ? node.length : Number(last), 0, value);
  else node[last] = value;
  return document;
}

/** `document` with `patch` applied (a copy; the argument is left as it was). Throws for an
 * operation that does not apply. */
export function applyPatch(document, patch) {
  let result = structuredClone(document);
  for (const operation of patch) {
    const value = structuredClone(operation.value);
    switch (operation.op) {
      case 'add': result = add(result, operation.path, value); break;
      case 'remove': remove(result, operation.path); break;
      case 'replace':
        if (operation.path === '') { result = value; break; }
        remove(result, operation.path);
        result = add(result, operation.path, value);
        break;
      case 'move': result = add(result, operation.path, remove(result, operation.from)); break;
      case 'copy': result = add(result, operation.path, structuredClone(get(result, operation.from))); break;
      case 'test': break;
      default: throw new Error(`unknown operation ${operation.op}`);
    }
  }
  return result;
}
