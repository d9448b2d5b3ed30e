import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { canonicalJson, sha256Hex } from '../../core/canonical-json.ts';

/**
 * The definition, written the slow way, with no quoting kept: each object's keys sorted as strings (a copy
 * made with Object.fromEntries would put integer-like keys first, as JavaScript orders them).
 */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const object = value as Record<string, unknown>;
  const members = Object.keys(object)
    .sort()
    .filter((key) => object[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${reference(object[key])}`);
  return `{${members.join(',')}}`;
}

test('the canonical form sorts every object by its keys, for any JSON value', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      assert.equal(canonicalJson(value), reference(value));
    }),
    { numRuns: 2000 },
  );
});

test('keys that need escaping are quoted as JSON quotes them, the first time and every time after', () => {
  const value = { 'a"b': 1, 'c\\d': 2, '\u0000': 3, 'é\ud800': 4, a: { 'a"b': 5 } };
  const expected = reference(value);
  assert.equal(canonicalJson(value), expected);
  assert.equal(canonicalJson(value), expected);
});

test('more distinct keys than are kept quoted still give the same text', () => {
  const many = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, i]));
  assert.equal(canonicalJson(many), reference(many));
  assert.equal(canonicalJson({ late: many }), reference({ late: many }));
});

test('sha256Hex is the SHA-256 of the UTF-8 bytes, for text and for buffers', () => {
  for (const text of ['', 'x', 'Pembayar é 中 😀']) {
    const expected = createHash('sha256').update(text, 'utf8').digest('hex');
    assert.equal(sha256Hex(text), expected);
    assert.equal(sha256Hex(Buffer.from(text, 'utf8')), expected);
  }
});
