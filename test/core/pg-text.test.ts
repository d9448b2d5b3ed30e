import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeText, encodeParams, encodeText } from '../../core/store/pg/text.ts';

// Strings dense in what the encoding touches: NUL, the escape U+E000, and the '0' that follows an escape.
const tricky = fc
  .array(fc.oneof(fc.constantFrom('\u0000', '\uE000', '0', 'a', '\u0007'), fc.string({ maxLength: 3 })))
  .map((parts) => parts.join(''));

test('text written to PostgreSQL holds no NUL and reads back exactly as it was, for any string', () => {
  fc.assert(
    fc.property(fc.oneof(tricky, fc.string({ unit: 'binary' })), (text) => {
      const stored = encodeText(text);
      assert.equal(stored.includes('\u0000'), false);
      assert.equal(decodeText(stored), text);
    }),
    { numRuns: 500 },
  );
  assert.equal(encodeText('Nur Aisyah'), 'Nur Aisyah', 'plain text is stored as it is');
});

test('query parameters are encoded where they are text, in arrays too, and left alone otherwise', () => {
  const plain = ['LZS', 1, null];
  assert.equal(encodeParams(plain), plain, 'nothing to encode: the same array');
  const bytes = Buffer.from([0, 1]);
  assert.deepEqual(encodeParams(['a\u0000', ['b\uE000'], bytes, 7]), [
    'a\uE0000',
    ['b\uE000\uE000'],
    bytes,
    7,
  ]);
});
