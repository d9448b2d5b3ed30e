import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { findJsonShapeProblem } from '../../core/http/json-shape.ts';

const LIMITS = { maxDepth: 4, maxKeys: 3 };

test('the JSON shape scan names the first object too large or too deep, by its pointer', () => {
  const cases: [string, unknown, { pointer: string; message: RegExp } | undefined][] = [
    ['a document within the limits', { a: [{ b: 1, c: 'x' }], d: null }, undefined],
    ['an object with one key too many', { a: 1, b: 2, c: 3, d: 4 }, { pointer: '', message: /more than 3/ }],
    [
      'a large object inside an array',
      { t: [{}, { a: 1, b: 2, c: 3, d: 4 }] },
      { pointer: '/t/1', message: /more than 3 properties/ },
    ],
    ['nesting one level too deep', { a: [[[[1]]]] }, { pointer: '/a/0/0/0', message: /deeper than 4/ }],
    [
      'keys that need escaping, with brackets, commas and quotes inside strings',
      { 'a/b~c"{[,': { x: '}],{"', y: { p: 1, q: 2, r: 3, s: 4 } } },
      { pointer: '/a~1b~0c"{[,/y', message: /more than 3/ },
    ],
    ['strings that look like structure', { a: '{{{{{{', b: '"\\"[[[[[', c: ',,,,' }, undefined],
  ];
  for (const [what, value, expected] of cases) {
    const found = findJsonShapeProblem(JSON.stringify(value), LIMITS);
    if (!expected) {
      assert.equal(found, undefined, what);
      continue;
    }
    assert.equal(found?.pointer, expected.pointer, what);
    assert.match(found.message, expected.message, what);
  }
});

/**
 * The scan as first written, a character at a time: the reference the scan that skips strings with indexOf
 * must agree with, on any text, valid JSON or not.
 */
function referenceScan(text: string, limits: { maxDepth: number; maxKeys: number }) {
  type Frame = { object: boolean; count: number; keyStart: number; keyEnd: number; expectKey: boolean };
  const stack: Frame[] = [];
  const pointerOf = (frames: readonly Frame[]) =>
    frames
      .map((frame) => {
        if (!frame.object) return `/${frame.count}`;
        let key: unknown;
        try {
          key = JSON.parse(text.slice(frame.keyStart, frame.keyEnd));
        } catch {
          key = text.slice(frame.keyStart + 1, frame.keyEnd - 1);
        }
        return `/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
      })
      .join('');
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      i += 1;
      while (i < text.length) {
        const d = text.charCodeAt(i);
        if (d === 0x22) break;
        i += d === 0x5c ? 2 : 1;
      }
      const top = stack.at(-1);
      if (!top?.object || !top.expectKey) continue;
      top.expectKey = false;
      top.keyStart = start;
      top.keyEnd = i + 1;
      top.count += 1;
      if (top.count > limits.maxKeys) return { pointer: pointerOf(stack.slice(0, -1)), message: 'keys' };
    } else if (c === 0x7b || c === 0x5b) {
      if (stack.length >= limits.maxDepth) return { pointer: pointerOf(stack), message: 'depth' };
      stack.push({ object: c === 0x7b, count: 0, keyStart: 0, keyEnd: 0, expectKey: c === 0x7b });
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (c === 0x2c) {
      const top = stack.at(-1);
      if (top?.object) top.expectKey = true;
      else if (top) top.count += 1;
    }
  }
  return undefined;
}

test('the scan finds what a scan a character at a time finds, in any text', () => {
  const structural = fc
    .array(fc.constantFrom('{', '}', '[', ']', ',', ':', '"', '\\', 'a', '/', '~', '1', ' '), {
      maxLength: 80,
    })
    .map((chars) => chars.join(''));
  fc.assert(
    fc.property(
      fc.oneof(fc.json(), structural, fc.string()),
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 1, max: 4 }),
      (text, maxDepth, maxKeys) => {
        const limits = { maxDepth, maxKeys };
        const expected = referenceScan(text, limits);
        const found = findJsonShapeProblem(text, limits);
        assert.equal(found?.pointer, expected?.pointer, text);
        assert.equal(found === undefined, expected === undefined, text);
        if (found) assert.match(found.message, expected?.message === 'keys' ? /properties/ : /deeper/);
      },
    ),
    { numRuns: 20_000 },
  );
});
