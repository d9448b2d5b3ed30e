import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bankRecord, fitrahRecord, problemOf, startApp } from '../helpers.ts';
import { appDb } from '../support/app-db.ts';
import type { BankTransaction } from '../../schemas/index.ts';

type Mutate = (record: Record<string, unknown> & { data: Record<string, unknown> }) => void;

/** Each rule of the schema, with a record that breaks only that rule and the pointer the 422 must name. */
const INVALID: { rule: string; mutate: Mutate; pointer: string; message?: RegExp }[] = [
  { rule: 'agency is required', mutate: (r) => delete r.agency, pointer: '/agency', message: /required/ },
  { rule: 'orderno is required', mutate: (r) => delete r.orderno, pointer: '/orderno' },
  { rule: 'amount is required', mutate: (r) => delete r.amount, pointer: '/amount' },
  { rule: 'name is required', mutate: (r) => delete r.name, pointer: '/name' },
  { rule: 'email is required', mutate: (r) => delete r.email, pointer: '/email' },
  { rule: 'time is required', mutate: (r) => delete r.time, pointer: '/time' },
  { rule: 'status is required', mutate: (r) => delete r.status, pointer: '/status' },
  { rule: 'data is required', mutate: (r) => delete (r as Record<string, unknown>).data, pointer: '/data' },
  { rule: 'agency outside the configured codes', mutate: (r) => (r.agency = 'BANKXYZ'), pointer: '/agency' },
  { rule: 'agency is case-sensitive', mutate: (r) => (r.agency = 'banklzs'), pointer: '/agency' },
  { rule: 'status outside the enum', mutate: (r) => (r.status = 'SUCCESS'), pointer: '/status' },
  { rule: 'status "cancelled"', mutate: (r) => (r.status = 'cancelled'), pointer: '/status' },
  { rule: 'amount below zero', mutate: (r) => (r.amount = -0.01), pointer: '/amount' },
  {
    rule: 'amount with three decimals',
    mutate: (r) => (r.amount = 10.005),
    pointer: '/amount',
    message: /two decimal/,
  },
  { rule: 'amount as a string', mutate: (r) => (r.amount = '10.00'), pointer: '/amount' },
  { rule: 'amount above the ceiling', mutate: (r) => (r.amount = 100000000.01), pointer: '/amount' },
  {
    rule: 'email without a domain',
    mutate: (r) => (r.email = 'aisyah@'),
    pointer: '/email',
    message: /email/,
  },
  { rule: 'email too long', mutate: (r) => (r.email = `${'a'.repeat(250)}@x.my`), pointer: '/email' },
  {
    rule: 'time without an offset',
    mutate: (r) => (r.time = '2026-11-20T09:15:23'),
    pointer: '/time',
    message: /offset/,
  },
  { rule: 'time as a date only', mutate: (r) => (r.time = '2026-11-20'), pointer: '/time' },
  {
    rule: 'time with an impossible date',
    mutate: (r) => (r.time = '2026-02-30T09:00:00+08:00'),
    pointer: '/time',
  },
  {
    rule: 'time with a space separator',
    mutate: (r) => (r.time = '2026-11-20 09:15:23+08:00'),
    pointer: '/time',
  },
  {
    rule: 'time with a three-digit offset',
    mutate: (r) => (r.time = '2026-11-20T09:15:23+080'),
    pointer: '/time',
  },
  {
    rule: 'time with an offset of 24 hours',
    mutate: (r) => (r.time = '2026-11-20T09:15:23+2400'),
    pointer: '/time',
  },
  {
    rule: 'time with an offset mixing both forms',
    mutate: (r) => (r.time = '2026-11-20T09:15:23+08:0'),
    pointer: '/time',
  },
  { rule: 'orderno empty', mutate: (r) => (r.orderno = ''), pointer: '/orderno' },
  { rule: 'orderno with a space', mutate: (r) => (r.orderno = 'MBB 1'), pointer: '/orderno' },
  { rule: 'orderno too long', mutate: (r) => (r.orderno = 'X'.repeat(65)), pointer: '/orderno' },
  { rule: 'name empty', mutate: (r) => (r.name = ''), pointer: '/name' },
  { rule: 'name blank', mutate: (r) => (r.name = '   '), pointer: '/name' },
  {
    rule: 'zakat_city too long',
    mutate: (r) => (r.data.zakat_city = 'C'.repeat(101)),
    pointer: '/data/zakat_city',
  },
  { rule: 'name too long', mutate: (r) => (r.name = 'N'.repeat(201)), pointer: '/name' },
  {
    rule: 'unknown property on a record',
    mutate: (r) => (r.amout = 1),
    pointer: '/amout',
    message: /not an allowed/,
  },
  {
    rule: 'data not an object',
    mutate: (r) => ((r as Record<string, unknown>).data = 'x'),
    pointer: '/data',
  },
  { rule: 'unknown property in data', mutate: (r) => (r.data.zakat_icno = '1'), pointer: '/data/zakat_icno' },
  { rule: 'data.email invalid', mutate: (r) => (r.data.email = 'not-an-email'), pointer: '/data/email' },
  {
    rule: 'zakat_ic_no with 11 digits',
    mutate: (r) => (r.data.zakat_ic_no = '85031210543'),
    pointer: '/data/zakat_ic_no',
  },
  {
    rule: 'zakat_ic_no with dashes',
    mutate: (r) => (r.data.zakat_ic_no = '850312-10-5432'),
    pointer: '/data/zakat_ic_no',
  },
  {
    rule: 'zakat_year with 2 digits',
    mutate: (r) => (r.data.zakat_year = '26'),
    pointer: '/data/zakat_year',
  },
  {
    rule: 'zakat_phone with 9 digits',
    mutate: (r) => (r.data.zakat_phone = '012345678'),
    pointer: '/data/zakat_phone',
  },
  {
    rule: 'zakat_phone with 13 digits',
    mutate: (r) => (r.data.zakat_phone = '6012345678901'),
    pointer: '/data/zakat_phone',
  },
  {
    rule: 'zakat_phone with a plus',
    mutate: (r) => (r.data.zakat_phone = '+60123456789'),
    pointer: '/data/zakat_phone',
  },
  {
    rule: 'zakat_postcode with 4 digits',
    mutate: (r) => (r.data.zakat_postcode = '4010'),
    pointer: '/data/zakat_postcode',
  },
  {
    rule: 'zakat_amount not numeric',
    mutate: (r) => (r.data.zakat_amount = 'RM150'),
    pointer: '/data/zakat_amount',
  },
  {
    rule: 'zakat_amount with three decimals',
    mutate: (r) => (r.data.zakat_amount = '150.505'),
    pointer: '/data/zakat_amount',
  },
  {
    rule: 'zakat_amount as a number',
    mutate: (r) => (r.data.zakat_amount = 150.5),
    pointer: '/data/zakat_amount',
  },
  {
    rule: 'zakat_state outside the enum',
    mutate: (r) => (r.data.zakat_state = 'Selangor'),
    pointer: '/data/zakat_state',
  },
  {
    rule: 'zakat_state "wilayah"',
    mutate: (r) => (r.data.zakat_state = 'wilayah'),
    pointer: '/data/zakat_state',
  },
  {
    rule: 'zakat_type outside the enum',
    mutate: (r) => (r.data.zakat_type = 'zakat_harta'),
    pointer: '/data/zakat_type',
  },
  {
    rule: 'zakat_rate not numeric',
    mutate: (r) => (r.data.zakat_rate = 'seven'),
    pointer: '/data/zakat_rate',
  },
  {
    rule: 'zakat_dependant not a whole number',
    mutate: (r) => (r.data.zakat_dependant = '2.5'),
    pointer: '/data/zakat_dependant',
  },
  {
    rule: 'optional field as an empty string',
    mutate: (r) => (r.data.zakat_phone = ''),
    pointer: '/data/zakat_phone',
  },
  { rule: 'optional field as null', mutate: (r) => (r.data.zakat_city = null), pointer: '/data/zakat_city' },
  {
    rule: 'zakat_address too long',
    mutate: (r) => (r.data.zakat_address = 'A'.repeat(501)),
    pointer: '/data/zakat_address',
  },
];

test('the bank webhook schema', async (t) => {
  const app = await startApp(t);

  for (const { rule, mutate, pointer, message } of INVALID) {
    await t.test(`refuses a record whose ${rule}, naming ${pointer}, and stores nothing`, async () => {
      const good = bankRecord();
      const bad = structuredClone(good) as unknown as Parameters<Mutate>[0];
      mutate(bad);
      const response = await app.postBatch({ transactions: [bankRecord(), bad] });
      assert.equal(response.status, 422);
      const problem = await problemOf(response);
      assert.equal(problem.type, 'https://docs.amil.my/problems/validation-failed');
      const errors = problem.errors ?? [];
      const hit = errors.find((e) => e.pointer === `/transactions/1${pointer}`);
      assert.ok(hit, `expected an error at /transactions/1${pointer}, got ${JSON.stringify(errors)}`);
      assert.equal(hit.index, 1);
      if (typeof bad.orderno === 'string') assert.equal(hit.orderno, bad.orderno);
      if (message) assert.match(hit.message, message);
      assert.ok(
        errors.every((e) => e.pointer.startsWith('/transactions/1')),
        'only the bad record is named',
      );
    });
  }

  const VALID: { variant: string; record: BankTransaction }[] = [
    { variant: 'an integer amount', record: bankRecord({ amount: 2500 }) },
    { variant: 'an amount of zero', record: bankRecord({ amount: 0 }) },
    { variant: 'one decimal', record: bankRecord({ amount: 10.5 }) },
    { variant: 'two decimals that are not exact binary floats', record: bankRecord({ amount: 0.07 }) },
    { variant: 'a large amount with two decimals', record: bankRecord({ amount: 12345678.91 }) },
    { variant: 'a UTC time', record: bankRecord({ time: '2026-11-20T01:15:23Z' }) },
    { variant: 'fractional seconds', record: bankRecord({ time: '2026-11-20T09:15:23.123+08:00' }) },
    { variant: 'a negative offset', record: bankRecord({ time: '2026-11-19T20:15:23-05:00' }) },
    {
      variant: 'an offset without a colon (+0800)',
      record: bankRecord({ time: '2026-11-20T09:15:23+0800' }),
    },
    { variant: 'an offset in hours only (+08)', record: bankRecord({ time: '2026-11-20T09:15:23+08' }) },
    { variant: 'an empty zakat_city', record: bankRecord({ data: { zakat_city: '' } }) },
    { variant: 'an empty data object', record: bankRecord({ data: {} }) },
    { variant: 'a fitrah record with rate and dependants', record: fitrahRecord() },
    { variant: 'a BANK live-test record', record: bankRecord({ agency: 'BANK', amount: 1 }) },
    {
      variant: 'a BANKPPZ record',
      record: bankRecord({ agency: 'BANKPPZ', data: { zakat_state: 'putrajaya' } }),
    },
    { variant: 'a 12-digit phone', record: bankRecord({ data: { zakat_phone: '601234567890' } }) },
    { variant: 'zakat_amount without decimals', record: bankRecord({ data: { zakat_amount: '150' } }) },
  ];
  for (const { variant, record } of VALID) {
    await t.test(`accepts a record with ${variant}`, async () => {
      const response = await app.postBatch({ transactions: [record] });
      assert.equal(response.status, 200, await response.clone().text());
    });
  }

  await t.test('accepts every zakat_state and zakat_type of the spec', async () => {
    const states = [
      'johor',
      'kedah',
      'kelantan',
      'melaka',
      'negeri_sembilan',
      'pahang',
      'pulau_pinang',
      'perak',
      'perlis',
      'sabah',
      'sarawak',
      'selangor',
      'terengganu',
      'kuala_lumpur',
      'labuan',
      'putrajaya',
    ] as const;
    const types = [
      'fitrah',
      'zakat_emas',
      'zakat_fitrah',
      'zakat_kwsp',
      'zakat_padi',
      'zakat_pendapatan',
      'zakat_perak',
      'zakat_perniagaan',
      'zakat_pertanian',
      'zakat_qada',
      'zakat_rikaz',
      'zakat_saham',
      'zakat_simpanan',
      'zakat_ternakan',
    ] as const;
    const transactions = [
      ...states.map((zakat_state) => bankRecord({ data: { zakat_state } })),
      ...types.map((zakat_type) => bankRecord({ data: { zakat_type } })),
    ];
    const response = await app.postBatch({ transactions });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { summary: { accepted: number } };
    assert.equal(body.summary.accepted, states.length + types.length);
  });

  await t.test('accepts an optional $schema and refuses unknown top-level properties', async () => {
    const ok = await app.postBatch({
      $schema: 'https://schemas.amil.my/bank-webhook-request.json',
      transactions: [bankRecord()],
    });
    assert.equal(ok.status, 200);
    const bad = await app.postBatch({ transactions: [bankRecord()], batch: 7 });
    assert.equal(bad.status, 422);
    assert.deepEqual(
      (await problemOf(bad)).errors?.map((e) => e.pointer),
      ['/batch'],
    );
  });

  await t.test('refuses a body without transactions, an empty batch, and a non-object body', async () => {
    for (const [body, pointer] of [
      [{}, '/transactions'],
      [{ transactions: [] }, '/transactions'],
      [{ transactions: {} }, '/transactions'],
      [[bankRecord()], ''],
    ] as const) {
      const response = await app.postBatch(body);
      assert.equal(response.status, 422, JSON.stringify(body));
      assert.ok(
        (await problemOf(response)).errors?.some((e) => e.pointer === pointer),
        JSON.stringify(body),
      );
    }
  });

  await t.test('lists every invalid record of a batch, each with its index and orderno', async () => {
    const transactions = [
      bankRecord(),
      bankRecord({ orderno: 'BAD-1', status: 'done' as never }),
      bankRecord(),
      bankRecord({ orderno: 'BAD-3', email: 'nope' }),
    ];
    const problem = await problemOf(await app.postBatch({ transactions }));
    assert.deepEqual(
      problem.errors?.map((e) => [e.index, e.orderno, e.pointer]),
      [
        [1, 'BAD-1', '/transactions/1/status'],
        [3, 'BAD-3', '/transactions/3/email'],
      ],
    );
    assert.match(problem.detail ?? '', /2 record/);
  });

  await t.test('stored nothing from any refused batch', async () => {
    const counts = await app.deps.store.bankPostings.counts();
    // Only the accepted batches above: 17 single records, 30 states/types, 1 $schema batch.
    assert.equal(counts.postings, 17 + 30 + 1);
    assert.equal(counts.batches, 17 + 1 + 1);
  });
});

test('an empty optional free-text field is stored as absent, and the archive keeps the body as it came', async (t) => {
  const app = await startApp(t);
  const base = bankRecord();
  const record = { ...base, data: { ...base.data, zakat_name: '', zakat_address: '', zakat_city: '' } };
  const text = JSON.stringify({ transactions: [record] });
  const response = await app.postBatch(text);
  assert.equal(response.status, 200, await response.clone().text());

  const stored = await app.deps.store.bankPostings.get('demo-bank', record.orderno);
  assert.ok(stored);
  const data = (JSON.parse(stored.record) as { data: Record<string, string> }).data;
  for (const field of ['zakat_name', 'zakat_address', 'zakat_city']) {
    assert.equal(Object.hasOwn(data, field), false, `${field} is absent, not ""`);
  }
  assert.equal(data.zakat_postcode, '40100', 'the other fields are kept');

  const again = { ...base, data: { ...base.data } };
  delete again.data.zakat_name;
  delete again.data.zakat_address;
  delete again.data.zakat_city;
  const resent = (await (await app.postBatch({ transactions: [again] })).json()) as {
    results: { outcome: string }[];
  };
  assert.equal(resent.results[0]?.outcome, 'duplicate', 'the same record without the fields is identical');

  const [first] = await appDb(t, app).rows<{ body: Buffer }>(
    'SELECT body FROM webhook_batches ORDER BY received_at',
  );
  assert.equal(first?.body.toString('utf8'), text, 'the archive has the empty strings as sent');
});

test('text that is not well-formed Unicode (a lone surrogate escape) is refused with 422 pointing at it, nothing stored', async (t) => {
  const app = await startApp(t);
  const good = bankRecord();
  const bad = bankRecord({ name: 'BAD-NAME' });
  const city = bankRecord();
  city.data = { ...city.data, zakat_city: 'BAD-CITY' };
  // As a bank's encoder may write them: escapes of half a surrogate pair, which no UTF-8 can hold.
  const text = JSON.stringify({ transactions: [good, bad, city] })
    .replace('"name":"BAD-NAME"', '"name":"Nur \\ud800 Aisyah"')
    .replace('"zakat_city":"BAD-CITY"', '"zakat_city":"Shah \\udc00 Alam"');
  assert.match(text, /\\ud800/);
  const response = await app.postBatch(text);
  assert.equal(response.status, 422);
  const problem = await problemOf(response);
  assert.deepEqual(
    problem.errors?.map((e) => e.pointer),
    ['/transactions/1/name', '/transactions/2/data/zakat_city'],
  );
  assert.match(problem.errors?.[0]?.message ?? '', /not well-formed Unicode: it holds a lone surrogate/);
  for (const record of [good, bad, city])
    assert.equal(await app.deps.store.bankPostings.get('demo-bank', record.orderno), undefined);

  // A pair written as escapes (an emoji) is text like any other.
  const emoji = bankRecord({ name: 'EMOJI-NAME' });
  const paired = JSON.stringify({ transactions: [emoji] }).replace(
    '"name":"EMOJI-NAME"',
    '"name":"Nur \\ud83d\\ude00 Aisyah"',
  );
  assert.equal((await app.postBatch(paired)).status, 200);
  assert.equal((await app.deps.store.bankPostings.get('demo-bank', emoji.orderno))?.name, 'Nur 😀 Aisyah');
});

test('+0800 and +08 are read as +08:00: the same instant and business day, and a resend with +08:00 is a duplicate', async (t) => {
  const app = await startApp(t);
  const colonless = bankRecord({ time: '2026-11-20T00:15:23+0800' });
  const hoursOnly = bankRecord({ time: '2026-11-20T00:15:23.5+08' });
  const west = bankRecord({ time: '2026-11-19T11:15:23-0500' });
  const response = await app.postBatch({ transactions: [colonless, hoursOnly, west] });
  assert.equal(response.status, 200, await response.clone().text());

  const one = await app.deps.store.bankPostings.get('demo-bank', colonless.orderno);
  assert.equal(one?.timeUtc, '2026-11-19T16:15:23.000Z');
  assert.equal(one?.businessDate, '2026-11-20', 'the KL day of the instant, not the UTC one');
  assert.equal(one?.timeRaw, '2026-11-20T00:15:23+0800', 'the time as the bank wrote it');
  const two = await app.deps.store.bankPostings.get('demo-bank', hoursOnly.orderno);
  assert.equal(two?.timeUtc, '2026-11-19T16:15:23.500Z');
  const three = await app.deps.store.bankPostings.get('demo-bank', west.orderno);
  assert.equal(three?.timeUtc, '2026-11-19T16:15:23.000Z');

  const resent = (await (
    await app.postBatch({ transactions: [{ ...colonless, time: '2026-11-20T00:15:23+08:00' }] })
  ).json()) as { results: { outcome: string }[] };
  assert.equal(resent.results[0]?.outcome, 'duplicate');
});
