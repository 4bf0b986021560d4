import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { applyPatch, JSONPatchError, jsonEqual } from '../src/patch.js';
import { formatPointer, parsePointer, valueAt } from '../src/pointer.js';
import { testData } from '../test-support/environment.js';

const data = testData();

/**
 * Runs every enabled record of one json-patch-tests file; returns how many ran.
 *
 * @param {string} file
 */
function runConformance(file) {
  // JSON.parse keeps the last of the duplicate "op" keys some disabled records contain.
  const path = join(/** @type {string} */ (data.path), 'json-patch-tests', file);
  const records = JSON.parse(readFileSync(path, 'utf8'));
  assert.ok(Array.isArray(records) && records.length > 0, `${file} holds no records`);
  let ran = 0;
  const failures = [];
  for (const [i, record] of records.entries()) {
    if (record.disabled || !('doc' in record)) continue;
    ran++;
    const name = `${file}[${i}] ${record.comment ?? ''}`;
    const before = JSON.stringify(record.doc);
    let result;
    let thrown;
    try {
      result = applyPatch(record.doc, record.patch);
    } catch (error) {
      thrown = error;
    }
    if (JSON.stringify(record.doc) !== before) failures.push(`${name}: the input was modified`);
    if ('error' in record) {
      if (!(thrown instanceof JSONPatchError)) {
        const got = thrown ?? JSON.stringify(result);
        failures.push(`${name}: expected a JSONPatchError (${record.error}), got ${got}`);
      }
    } else if (thrown) {
      failures.push(`${name}: threw ${thrown}`);
    } else if ('expected' in record && !jsonEqual(result, record.expected)) {
      const [got, expected] = [JSON.stringify(result), JSON.stringify(record.expected)];
      failures.push(`${name}: got ${got}, expected ${expected}`);
    }
  }
  assert.deepEqual(failures, []);
  return ran;
}

describe('RFC 6902 conformance (json-patch-tests)', { skip: data.skip, timeout: 60_000 }, () => {
  test('tests.json: every enabled record', () => {
    const ran = runConformance('tests.json');
    assert.ok(ran > 0, 'no record ran');
  });
  test('spec_tests.json: every enabled record (RFC 6902 appendix A)', () => {
    const ran = runConformance('spec_tests.json');
    assert.ok(ran > 0, 'no record ran');
  });
});

describe('applyPatch', () => {
  test('is atomic: a failing operation leaves the input and its subtrees untouched', () => {
    const doc = { a: { b: [1, 2] }, c: 'keep' };
    const snapshot = JSON.stringify(doc);
    assert.throws(
      () => applyPatch(doc, [
        { op: 'add', path: '/a/b/-', value: 3 },
        { op: 'replace', path: '/c', value: 'changed' },
        { op: 'remove', path: '/missing' },
      ]),
      (error) => error instanceof JSONPatchError && error.index === 2,
    );
    assert.equal(JSON.stringify(doc), snapshot);
  });

  test('shares unchanged subtrees and copies the changed path', () => {
    const doc = { changed: { n: 1 }, same: { deep: [1] } };
    const patch = [{ op: 'replace', path: '/changed/n', value: 2 }];
    const result = /** @type {any} */ (applyPatch(doc, patch));
    assert.deepEqual(result, { changed: { n: 2 }, same: { deep: [1] } });
    assert.equal(result.same, doc.same);
    assert.notEqual(result.changed, doc.changed);
    assert.equal(doc.changed.n, 1);
  });

  test('a copied subtree is independent of its source within one patch', () => {
    const doc = { a: { list: [1] } };
    const result = applyPatch(doc, [
      { op: 'add', path: '/a/list/-', value: 2 },
      { op: 'copy', from: '/a', path: '/b' },
      { op: 'add', path: '/b/list/-', value: 3 },
    ]);
    assert.deepEqual(result, { a: { list: [1, 2] }, b: { list: [1, 2, 3] } });
  });

  test('a __proto__ member is data, never a prototype', () => {
    const doc = JSON.parse('{"__proto__": {"x": 1}}');
    const result = /** @type {any} */ (applyPatch(doc, [
      { op: 'add', path: '/__proto__/y', value: 2 },
      { op: 'add', path: '/other', value: JSON.parse('{"__proto__": 5}') },
    ]));
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.deepEqual(Object.keys(result), ['__proto__', 'other']);
    assert.equal(JSON.stringify(result), '{"__proto__":{"x":1,"y":2},"other":{"__proto__":5}}');
  });

  test('members named like Object.prototype properties do not exist until added', () => {
    assert.throws(() => applyPatch({}, [{ op: 'remove', path: '/constructor' }]), JSONPatchError);
    const test = [{ op: 'test', path: '/toString', value: null }];
    assert.throws(() => applyPatch({}, test), JSONPatchError);
  });

  test('many operations on one big array copy it once', () => {
    const items = Array.from({ length: 50_000 }, (_, i) => i);
    const patch = Array.from({ length: 2_000 },
      (_, i) => ({ op: 'replace', path: `/items/${i}`, value: -i }));
    const result = /** @type {any} */ (applyPatch({ items }, patch));
    assert.equal(result.items[1999], -1999);
    assert.equal(result.items[2000], 2000);
    assert.equal(items[1999], 1999);
  });

  test('move into its own child fails; move onto itself is a no-op', () => {
    const intoChild = [{ op: 'move', from: '/a', path: '/a/b/c' }];
    assert.throws(() => applyPatch({ a: { b: {} } }, intoChild), /own child/);
    const doc = { a: 1 };
    assert.deepEqual(applyPatch(doc, [{ op: 'move', from: '/a', path: '/a' }]), { a: 1 });
    assert.throws(() => applyPatch(doc, [{ op: 'move', from: '/x', path: '/x' }]), JSONPatchError);
  });
});

describe('JSON Pointer', () => {
  test('unescapes ~1 before ~0 and rejects other escapes', () => {
    assert.deepEqual(parsePointer('/a~1b/~01/~0~1'), ['a/b', '~1', '~/']);
    assert.deepEqual(parsePointer(''), []);
    assert.deepEqual(parsePointer('/'), ['']);
    assert.throws(() => parsePointer('/a~2'), /invalid '~' escape/);
    assert.throws(() => parsePointer('/a~'), /invalid '~' escape/);
    assert.throws(() => parsePointer('a'), /does not start with/);
  });

  test('format is the inverse of parse', () => {
    for (const pointer of ['', '/', '/a~1b/~01', '/0/-', '//x']) {
      assert.equal(formatPointer(parsePointer(pointer)), pointer);
    }
  });

  test('valueAt follows indices without leading zeros', () => {
    const doc = { a: [10, 20], 'k/~': true };
    assert.equal(valueAt(doc, '/a/1'), 20);
    assert.equal(valueAt(doc, '/a/01'), undefined);
    assert.equal(valueAt(doc, '/k~1~0'), true);
    assert.equal(valueAt(doc, '/constructor'), undefined);
  });
});
