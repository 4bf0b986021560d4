// When a coalescing Mirror calls its change listeners: the `coalesce` option turned into a
// function that runs `flush` later (once per task, per frame, or on the caller's schedule).

/**
 * When a coalescing mirror renders: null for every change at once.
 *
 * @param {import('./index.js').MirrorOptions['coalesce']} coalesce
 * @returns {((flush: () => void) => void) | null}
 */
export function renderSchedule(coalesce) {
  if (coalesce === undefined || coalesce === false) return null;
  if (typeof coalesce === 'function') return coalesce;
  if (coalesce === true || coalesce === 'task') {
    // setImmediate runs after the I/O callbacks of this turn: every line already read is applied.
    return typeof setImmediate === 'function'
      ? (flush) => void setImmediate(flush)
      : (flush) => void setTimeout(flush, 0);
  }
  if (coalesce === 'frame') {
    const frame = globalThis.requestAnimationFrame;
    return typeof frame === 'function'
      ? (flush) => void frame(() => flush())
      : (flush) => void setTimeout(flush, 16);
  }
  throw new TypeError(`coalesce: expected true, 'task', 'frame' or a function, got ${
    JSON.stringify(coalesce)}`);
}
