import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatSen, ringgitNumberToSen, ringgitStringToSen } from '../../core/money.ts';
import { businessDate, parseOffsetDateTime } from '../../core/time.ts';
import { isDecimalMultiple, isDecimalMultipleExactly } from '../../schemas/index.ts';

test('any sen amount survives the trip through a JSON number in ringgit', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 10_000_000_000 }), (sen) => {
      const wire = JSON.parse(formatSen(sen)) as number;
      assert.equal(isDecimalMultiple(wire, 0.01), true);
      assert.equal(ringgitNumberToSen(wire), sen);
    }),
  );
});

test('a number with a third decimal is never a multiple of 0.01', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 1_000_000_000 }),
      fc.integer({ min: 1, max: 9 }),
      (cents, thousandth) => {
        const value = Number(`${formatSen(cents)}${thousandth}`);
        assert.equal(isDecimalMultiple(value, 0.01), false, String(value));
      },
    ),
  );
});

test('multiples of a power of ten are read off the decimal form as the exact arithmetic judges them', () => {
  const divisors = [1, 0.1, 0.01, 0.001, 1e-9, 1e-15];
  fc.assert(
    fc.property(
      fc.oneof(
        fc.double(),
        fc.integer().map((n) => n / 100),
        fc.integer().map((n) => n / 1000),
      ),
      fc.constantFrom(...divisors),
      (value, divisor) => {
        assert.equal(
          isDecimalMultiple(value, divisor),
          isDecimalMultipleExactly(value, divisor),
          `${value} / ${divisor}`,
        );
      },
    ),
    { numRuns: 5000 },
  );
  assert.equal(isDecimalMultiple(10.5, 0.01), true);
  assert.equal(isDecimalMultiple(10.505, 0.01), false);
  assert.equal(isDecimalMultiple(1e21, 0.01), true);
  assert.equal(isDecimalMultiple(1e-7, 0.01), false);
  assert.equal(isDecimalMultiple(Number.NaN, 0.01), false);
});

test('ringgit strings convert to sen without floats and refuse what is not money', () => {
  assert.equal(ringgitStringToSen('0.07'), 7);
  assert.equal(ringgitStringToSen('10.5'), 1050);
  assert.equal(ringgitStringToSen('2500'), 250000);
  for (const bad of ['', '1.234', '-1', '1e3', ' 1', 'RM1'])
    assert.equal(ringgitStringToSen(bad), undefined, bad);
  assert.equal(formatSen(5), '0.05');
  assert.equal(formatSen(123456), '1234.56');
});

test('business dates are Kuala Lumpur dates, whatever offset the time carried', () => {
  const at = (s: string) => {
    const d = parseOffsetDateTime(s);
    assert.ok(d, s);
    return [d.toISOString(), businessDate(d)];
  };
  assert.deepEqual(at('2026-11-20T23:59:59+08:00'), ['2026-11-20T15:59:59.000Z', '2026-11-20']);
  assert.deepEqual(at('2026-11-20T16:00:00Z'), ['2026-11-20T16:00:00.000Z', '2026-11-21']);
  assert.deepEqual(at('2026-11-20T00:00:00+08:00'), ['2026-11-19T16:00:00.000Z', '2026-11-20']);
  assert.deepEqual(at('2026-11-19T12:00:00.123456-05:30'), ['2026-11-19T17:30:00.123Z', '2026-11-20']);
  assert.equal(parseOffsetDateTime('2026-11-20T10:00:00'), undefined);
  assert.equal(
    parseOffsetDateTime('0026-11-20T10:00:00Z')?.toISOString(),
    '0026-11-20T10:00:00.000Z',
    'not 1926',
  );
});

test('the business date of any instant, in any order of asking, is its date at UTC+8', () => {
  const LIMIT = 8.64e15 - 9 * 3_600_000;
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: -LIMIT, max: LIMIT }), { minLength: 1, maxLength: 20 }),
      (instants) => {
        for (const ms of instants) {
          const expected = new Date(ms + 8 * 3_600_000).toISOString().slice(0, 10);
          assert.equal(businessDate(new Date(ms)), expected, String(ms));
        }
      },
    ),
  );
  assert.throws(() => businessDate(new Date(Number.NaN)), RangeError);
});

test('a time written +hh:mm is read as the same instant as when written +hhmm, in range or not', () => {
  const digits = (n: number) =>
    fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n }).map((d) => d.join(''));
  const twoDigits = fc.oneof(
    digits(2),
    fc.integer({ min: 0, max: 59 }).map((n) => String(n).padStart(2, '0')),
  );
  fc.assert(
    fc.property(
      fc.oneof(digits(4), fc.integer({ min: 1990, max: 2100 }).map(String)),
      fc.oneof(
        digits(2),
        fc.integer({ min: 1, max: 12 }).map((n) => String(n).padStart(2, '0')),
      ),
      fc.oneof(
        digits(2),
        fc.integer({ min: 1, max: 31 }).map((n) => String(n).padStart(2, '0')),
      ),
      fc.tuple(twoDigits, twoDigits, twoDigits, twoDigits, twoDigits),
      fc.constantFrom('+', '-'),
      (year, month, day, [hour, minute, second, oh, om], sign) => {
        const local = `${year}-${month}-${day}T${hour}:${minute}:${second}`;
        const withColon = parseOffsetDateTime(`${local}${sign}${oh}:${om}`);
        const without = parseOffsetDateTime(`${local}${sign}${oh}${om}`);
        assert.equal(withColon?.getTime(), without?.getTime(), `${local}${sign}${oh}:${om}`);
      },
    ),
    { numRuns: 20_000 },
  );
  assert.equal(parseOffsetDateTime('2026-11-20T09:15:23+08:00')?.toISOString(), '2026-11-20T01:15:23.000Z');
  assert.equal(parseOffsetDateTime('2024-02-29T23:59:59-05:30')?.toISOString(), '2024-03-01T05:29:59.000Z');
  assert.equal(parseOffsetDateTime('0050-01-01T00:00:00+00:00')?.toISOString(), '0050-01-01T00:00:00.000Z');
});
