// A JSON value as a collapsible tree: objects and arrays are <details>, open to a depth.

/** A DOM node showing `value`; `open` levels start expanded. */
export function tree(value, open = 2, key = null) {
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
    if (key !== null) summary.append(label(`${key}: `));
    const count = Array.isArray(value) ? `[${value.length}]` : `{${Object.keys(value).length}}`;
    const size = document.createElement('span');
    size.className = 'size';
    size.textContent = count;
    summary.append(size);
    details.append(summary);
    const list = document.createElement('div');
    list.className = 'children';
    for (const [name, member] of Object.entries(value)) list.append(tree(member, open - 1, name));
    details.append(list);
    return details;
  }
  const leaf = document.createElement('div');
  leaf.className = 'leaf';
  if (key !== null) leaf.append(label(`${key}: `));
  const text = document.createElement('span');
  text.className = `value ${value === null ? 'null' : typeof value}`;
  text.textContent = JSON.stringify(value);
  leaf.append(text);
  return leaf;
}
