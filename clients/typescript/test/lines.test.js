import assert from 'node:assert/strict';
import { test } from 'node:test';

import { LineSplitter } from '../src/lines.js';

const text = '{"name":"é漢😀"}\r\n\n{"k":"\u2028 ü"}\n{"last":"no newline 😀"}';
const bytes = new TextEncoder().encode(text);
const expected = ['{"name":"é漢😀"}', '', '{"k":"\u2028 ü"}'];

test('every split of the input into two chunks gives the same lines', () => {
  for (let cut = 0; cut <= bytes.length; cut++) {
    const lines = new LineSplitter();
    const got = [...lines.push(bytes.slice(0, cut)), ...lines.push(bytes.slice(cut))];
    assert.deepEqual(got, expected, `cut at byte ${cut}`);
    assert.equal(lines.end(), '{"last":"no newline 😀"}', `cut at byte ${cut}`);
    assert.equal(lines.end(), null);
  }
});

test('one byte at a time gives the same lines', () => {
  const lines = new LineSplitter();
  const got = [];
  for (const byte of bytes) got.push(...lines.push(Uint8Array.of(byte)));
  assert.deepEqual(got, expected);
  assert.equal(lines.pendingBytes, new TextEncoder().encode('{"last":"no newline 😀"}').length);
});

test('a chunk reused by its producer does not change a pending line', () => {
  const lines = new LineSplitter();
  const chunk = new TextEncoder().encode('{"a":');
  assert.deepEqual(lines.push(chunk), []);
  chunk.fill(0x20);
  assert.deepEqual(lines.push(new TextEncoder().encode('1}\n')), ['{"a":1}']);
});
