import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EXCEPTION_CODES, isValidIcDate, normaliseRecord } from '../../pipeline/normalise/rules.ts';
import { bankRecord, fitrahRecord } from '../helpers.ts';

const codes = (record: Parameters<typeof normaliseRecord>[0]) => normaliseRecord(record).exceptions;

test('a clean record normalises with no exceptions: trimmed, lower-case email, sen, UTC and KL day', () => {
  const n = normaliseRecord(
    bankRecord({
      name: '  Nur Aisyah  ',
      email: 'Aisyah@Example.MY',
      amount: 150.5,
      time: '2026-11-20T23:30:00+08:00',
      data: {
        email: ' aisyah@example.my ',
        zakat_city: ' Shah Alam ',
        zakat_amount: '150.50',
        zakat_type: 'zakat_emas',
      },
    }),
  );
  assert.deepEqual(
    [n.name, n.email, n.amountSen, n.timeUtc, n.businessDate, n.city, n.type, n.exceptions],
    [
      'Nur Aisyah',
      'aisyah@example.my',
      15050,
      '2026-11-20T15:30:00.000Z',
      '2026-11-20',
      'Shah Alam',
      'zakat_emas',
      [],
    ],
  );
});

test('fitrah and zakat_fitrah are one canonical type, the raw value kept beside it', () => {
  for (const raw of ['fitrah', 'zakat_fitrah'] as const) {
    const base = fitrahRecord();
    const n = normaliseRecord({ ...base, data: { ...base.data, zakat_type: raw } });
    assert.deepEqual([n.typeRaw, n.type, n.exceptions], [raw, 'fitrah', []]);
  }
});

test('RM 21.00 at rate 7.00 with 3 dependants passes; with 2 dependants it is FITRAH_MISMATCH', () => {
  const base = fitrahRecord({ amount: 21 });
  const data = { ...base.data, zakat_rate: '7.00', zakat_amount: '21.00' };
  assert.deepEqual(codes({ ...base, data: { ...data, zakat_dependant: '3' } }), []);
  assert.deepEqual(codes({ ...base, data: { ...data, zakat_dependant: '2' } }), ['FITRAH_MISMATCH']);
});

test('the fitrah check is exact in sen: 2.60 x 6 = 15.60 passes, 15.59 does not', () => {
  const base = fitrahRecord();
  const data = { ...base.data, zakat_rate: '2.60', zakat_dependant: '6', zakat_amount: undefined };
  assert.deepEqual(codes({ ...base, amount: 15.6, data }), []);
  assert.deepEqual(codes({ ...base, amount: 15.59, data }), ['FITRAH_MISMATCH']);
});

test('each exception code has a case', () => {
  const fitrah = fitrahRecord();
  const plain = bankRecord();
  const cases: [keyof typeof EXCEPTION_CODES, Parameters<typeof normaliseRecord>[0]][] = [
    ['FITRAH_MISMATCH', { ...fitrah, amount: 27, data: { ...fitrah.data, zakat_amount: '27.00' } }],
    ['FITRAH_RATE_MISSING', { ...fitrah, data: { ...fitrah.data, zakat_rate: undefined } }],
    ['FITRAH_DEPENDANT_MISSING', { ...fitrah, data: { ...fitrah.data, zakat_dependant: undefined } }],
    ['ZAKAT_AMOUNT_DIFFERS', { ...plain, data: { ...plain.data, zakat_amount: '150.00' } }],
    ['FITRAH_FIELDS_ON_NON_FITRAH', { ...plain, data: { ...plain.data, zakat_rate: '7.00' } }],
    ['IC_INVALID_DATE', { ...plain, data: { ...plain.data, zakat_ic_no: '851332105432' } }],
    ['EMAIL_MISMATCH', { ...plain, data: { ...plain.data, email: 'someone.else@example.my' } }],
    ['CONTROL_CHARACTER', { ...plain, name: 'Ali\u0000 bin Abu' }],
  ];
  assert.deepEqual(
    cases.map(([code]) => code).sort(),
    Object.keys(EXCEPTION_CODES).sort(),
    'every code is covered',
  );
  for (const [code, record] of cases) {
    const data = Object.fromEntries(Object.entries(record.data).filter(([, v]) => v !== undefined));
    assert.deepEqual(codes({ ...record, data }), [code], code);
  }
});

test('IC dates: month and day must exist; 29 February needs a leap year in 19YY or 20YY', () => {
  assert.equal(isValidIcDate('850312105432'), true);
  assert.equal(isValidIcDate('000229105432'), true, '2000 was a leap year');
  assert.equal(isValidIcDate('960229105432'), true, '1996 was a leap year');
  assert.equal(isValidIcDate('010229105432'), false, 'neither 1901 nor 2001 was');
  for (const bad of ['851302105432', '850001105432', '850431105432', '850300105432']) {
    assert.equal(isValidIcDate(bad), false, bad);
  }
});

test('normalising is pure: the same record always gives the same result', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 99_999_999 }),
      fc.integer({ min: 1, max: 20 }),
      (sen, dependants) => {
        const record = fitrahRecord({ amount: sen / 100 });
        const r = {
          ...record,
          data: { ...record.data, zakat_dependant: String(dependants), zakat_amount: undefined },
        };
        assert.deepEqual(normaliseRecord(r), normaliseRecord(structuredClone(r)));
      },
    ),
  );
});

test('a control character kept in a name, e-mail or address is flagged CONTROL_CHARACTER; one trimmed away is not', () => {
  const plain = bankRecord();
  assert.deepEqual(codes({ ...plain, name: 'Ali\u0000 bin Abu' }), ['CONTROL_CHARACTER']);
  assert.deepEqual(codes({ ...plain, name: 'Ali\nbin Abu' }), ['CONTROL_CHARACTER']);
  assert.deepEqual(codes({ ...plain, name: 'Ali bin Abu\u007f' }), ['CONTROL_CHARACTER'], 'DEL');
  assert.deepEqual(codes({ ...plain, name: 'Ali\u0085bin Abu' }), ['CONTROL_CHARACTER'], 'C1 (NEL)');
  assert.deepEqual(codes({ ...plain, data: { ...plain.data, zakat_address: 'No 1,\u001bJalan Damai' } }), [
    'CONTROL_CHARACTER',
  ]);
  assert.deepEqual(
    codes({ ...plain, name: '\tAli bin Abu\r\n' }),
    [],
    'leading and trailing space is trimmed',
  );
});

test("the business day is Kuala Lumpur's for every instant, on either side of its midnight and whatever the offset sent", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 11, 31) }),
      fc.constantFrom('Z', '+08:00', '-05:30', '+05:45'),
      (ms, zone) => {
        const offsetMin =
          zone === 'Z'
            ? 0
            : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4)));
        const local = new Date(Math.floor(ms / 1000) * 1000 + offsetMin * 60_000).toISOString().slice(0, 19);
        const n = normaliseRecord(bankRecord({ time: `${local}${zone}` }));
        const kl = new Date(Math.floor(ms / 1000) * 1000 + 8 * 3_600_000).toISOString().slice(0, 10);
        assert.equal(n.businessDate, kl);
      },
    ),
  );
  // Each side of midnight in Kuala Lumpur (16:00 UTC), asked one after the other.
  assert.equal(normaliseRecord(bankRecord({ time: '2026-11-20T15:59:59Z' })).businessDate, '2026-11-20');
  assert.equal(normaliseRecord(bankRecord({ time: '2026-11-20T16:00:00Z' })).businessDate, '2026-11-21');
  assert.equal(
    normaliseRecord(bankRecord({ time: '2026-11-20T23:59:59.999+08:00' })).businessDate,
    '2026-11-20',
  );
});
