import { test } from 'node:test';
import assert from 'node:assert/strict';
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
