// A JSON value as a collapsible tree: objects and arrays are <details>, open to a depth. Every
// value carries its JSON Pointer (`data-pointer`), which the page blames from.

const escape = (token) => String(token).replaceAll('~', '~0').replaceAll('/', '~1');

/** A DOM node showing `value` at `pointer`; `open` levels start expanded. */
export function tree(value, open = 2, key = null, pointer = '') {
  const label = (text) => {
    const span = document.createElement('span');
    span.className = 'key';
    span.textContent = text;
    return span;
  };
  if (value !== null && typeof value === 'object') {
    const details = document.createElement('details');
    details.open = open > 0;
    const summary = document.createElement('summary');
    summary.dataset.pointer = pointer;
    if (key !== null) summary.append(label(`${key}: `));
    const count = Array.isArray(value) ? `[${value.length}]` : `{${Object.keys(value).length}}`;
    const size = document.createElement('span');
    size.className = 'size';
    size.textContent = count;
    summary.append(size);
    details.append(summary);
    const list = document.createElement('div');
    list.className = 'children';
    for (const [name, member] of Object.entries(value)) list.append(tree(member, open - 1, name, `${pointer}/${escape(name)}`));
    details.append(list);
    return details;
  }
  const leaf = document.createElement('div');
  leaf.className = 'leaf';
  leaf.dataset.pointer = pointer;
  if (key !== null) leaf.append(label(`${key}: `));
  const text = document.createElement('span');
  text.className = `value ${value === null ? 'null' : typeof value}`;
  text.textContent = JSON.stringify(value);
  leaf.append(text);
  return leaf;
}
