// An RFC 6902 patch as a diff: one line per operation, removals red, additions green,
// replacements as the new value.

/** A DOM node listing the operations of `patch`. */
export function diff(patch) {
  const list = document.createElement('div');
  list.className = 'diff';
  if (!patch || patch.length === 0) {
    list.textContent = 'no change';
    list.classList.add('empty');
    return list;
  }
  for (const op of patch) {
    const line = document.createElement('div');
    line.className = `op op-${op.op}`;
    const sign = { add: '+', remove: '−', replace: '~', move: '→', copy: '⇉', test: '?' }[op.op] || '·';
    const path = op.from !== undefined ? `${op.from} → ${op.path}` : op.path;
    line.textContent = `${sign} ${op.op} ${path || '/'}${'value' in op ? ` = ${JSON.stringify(op.value)}` : ''}`;
    list.append(line);
  }
  return list;
}
