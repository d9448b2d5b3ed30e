import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UnsecuredJWT } from 'jose';
import { signGet } from '../../core/signatures.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { fixedClock } from '../../core/clock.ts';
import { bankRecord, fitrahRecord, problemOf, reportToken, startApp, type TestApp } from '../helpers.ts';

const LZS_KEY = 'c3b5a0e2-7f1d-4c8e-9a6b-2d4f8e1a3b5c';
const PPZ_KEY = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
const PATH = '/api/report/v1/zakat';
const NOW = new Date('2026-11-20T12:00:00+08:00');

interface Envelope {
  status: string;
  data: { orderno: string; agency: string; amount: string; created_date: string; exceptions: string[] }[];
  stats: { total_pages: number; total_rows: number };
}

/** 23 LZS and 5 PPZ postings on 2026-11-20, normalised. */
async function reportApp(t: Parameters<typeof startApp>[0]): Promise<TestApp> {
  const app = await startApp(t, {}, { clock: fixedClock(NOW) });
  const records = [
    ...Array.from({ length: 23 }, (_, i) =>
      bankRecord({ orderno: `LZS-${String(i).padStart(3, '0')}`, agency: 'BANKLZS' }),
    ),
    ...Array.from({ length: 5 }, (_, i) => bankRecord({ orderno: `PPZ-${i}`, agency: 'BANKPPZ' })),
  ];
  assert.equal((await app.postBatch({ transactions: records })).status, 200);
  await createInProcessRuntime(app.deps).drain();
  return app;
}

const get = (app: TestApp, pathAndQuery: string, headers: Record<string, string> = {}) =>
  fetch(`${app.url}${pathAndQuery}`, { headers });

test('the zakat report: bearer token or signed GET, only the agencies the credentials cover', async (t) => {
  const app = await reportApp(t);
  const lzsToken = await reportToken(app, ['LZS'], NOW);
  const bearer = { authorization: `Bearer ${lzsToken}` };

  const ok = await get(app, `${PATH}?start=2026-11-20&items=-1`, bearer);
  assert.equal(ok.status, 200);
  const body = (await ok.json()) as Envelope;
  assert.equal(body.status, 'OK');
  assert.equal(body.data.length, 23);
  assert.ok(
    body.data.every((r) => r.agency === 'LZS' && r.orderno.startsWith('LZS-')),
    'nothing of PPZ',
  );
  assert.equal(body.data[0]?.created_date, '2026-11-20 09:15:23');
  assert.equal(body.data[0]?.amount, '150.50');

  const signed = signGet(PATH, { agency: 'PPZ', start: '2026-11-20', items: '-1' }, PPZ_KEY, NOW);
  const ppz = (await (await get(app, signed)).json()) as Envelope;
  assert.deepEqual(
    ppz.data.map((r) => r.agency),
    ['PPZ', 'PPZ', 'PPZ', 'PPZ', 'PPZ'],
  );

  // The matrix of refusals: every one refused, and no row in any refusal.
  const ppzToken = await reportToken(app, ['PPZ'], NOW);
  const none = new UnsecuredJWT({ agencies: ['LZS'] }).setIssuedAt().setExpirationTime('1h').encode();
  const refusals: [string, string, Record<string, string>, number, string][] = [
    ['no credentials', `${PATH}?agency=LZS`, {}, 401, 'unauthorized'],
    [
      'a token without that agency',
      `${PATH}?agency=LZS`,
      { authorization: `Bearer ${ppzToken}` },
      403,
      'forbidden',
    ],
    ['alg none', `${PATH}?agency=LZS`, { authorization: `Bearer ${none}` }, 401, 'token-'],
    [
      'the key of another agency',
      signGet(PATH, { agency: 'LZS' }, PPZ_KEY, NOW),
      {},
      401,
      'signature-mismatch',
    ],
    [
      'a tampered query',
      signGet(PATH, { agency: 'LZS', items: '5' }, LZS_KEY, NOW).replace('items=5', 'items=6'),
      {},
      401,
      'signature-mismatch',
    ],
    [
      'an expired exp',
      signGet(PATH, { agency: 'LZS' }, LZS_KEY, new Date(NOW.getTime() - 120_000)),
      {},
      401,
      'exp-expired',
    ],
    [
      'a future exp',
      signGet(PATH, { agency: 'LZS' }, LZS_KEY, new Date(NOW.getTime() + 120_000)),
      {},
      401,
      'exp-too-far-ahead',
    ],
    [
      'a repeated key',
      `${signGet(PATH, { agency: 'LZS' }, LZS_KEY, NOW)}&agency=PPZ`,
      {},
      400,
      'repeated-parameter',
    ],
    ['an unknown agency', signGet(PATH, { agency: 'NOPE' }, LZS_KEY, NOW), {}, 401, 'signature-mismatch'],
  ];
  for (const [what, url, headers, status, type] of refusals) {
    const response = await get(app, url, headers);
    assert.equal(response.status, status, what);
    const problem = await problemOf(response);
    assert.ok(problem.type.includes(type), `${what}: ${problem.type}`);
    assert.ok(!JSON.stringify(problem).includes('LZS-0'), `${what}: no data`);
  }
});

test('paging by the rule of 4.2 returns every row exactly once, for several page sizes', async (t) => {
  const app = await reportApp(t);
  const token = await reportToken(app, ['LZS'], NOW);
  for (const items of [1, 5, 7, 23, 100]) {
    const seen: string[] = [];
    for (let page = 0; ; page += 1) {
      const response = await get(app, `${PATH}?start=2026-11-20&items=${items}&page=${page}`, {
        authorization: `Bearer ${token}`,
      });
      const body = (await response.json()) as Envelope;
      seen.push(...body.data.map((r) => r.orderno));
      if (page === 0) assert.equal(body.stats.total_pages, Math.ceil(23 / items), `items=${items}`);
      if (body.data.length < items) break;
      assert.ok(page < 30, 'paging ends');
    }
    assert.equal(seen.length, 23, `items=${items}`);
    assert.equal(new Set(seen).size, 23, `items=${items}: no row twice`);
  }
});

test('report queries are checked: bad dates, sizes and pages are 400 with pointers', async (t) => {
  const app = await reportApp(t);
  const token = await reportToken(app, ['LZS'], NOW);
  const response = await get(app, `${PATH}?start=20-11-2026&items=0&page=-1`, {
    authorization: `Bearer ${token}`,
  });
  assert.equal(response.status, 400);
  assert.deepEqual(
    (await problemOf(response)).errors?.map((e) => e.pointer),
    ['/start', '/end', '/items', '/page'],
  );
});

test('/api/version and /api/echo answer without auth', async (t) => {
  const app = await startApp(t);
  const version = (await (await get(app, '/api/version')).json()) as {
    name: string;
    version: string;
    started_at: string;
  };
  assert.equal(version.name, 'amil');
  assert.match(version.version, /^\d+\.\d+\.\d+$/);
  const echo = (await (await get(app, '/api/echo?ping=1')).json()) as {
    status: string;
    query: Record<string, string>;
  };
  assert.deepEqual([echo.status, echo.query], ['OK', { ping: '1' }]);
});

test('a token covering several agencies and no agency gets their combined report, each row naming its agency', async (t) => {
  const app = await reportApp(t);
  const both = { authorization: `Bearer ${await reportToken(app, ['LZS', 'PPZ'], NOW)}` };
  const agencyOf = (orderno: string) => orderno.split('-')[0];

  const response = await get(app, `${PATH}?start=2026-11-20&items=-1`, both);
  assert.equal(response.status, 200);
  const all = (await response.json()) as Envelope;
  assert.equal(all.data.length, 28);
  assert.equal(all.stats.total_rows, 28);
  assert.ok(
    all.data.every((r) => r.agency === agencyOf(r.orderno)),
    'each row says its own agency',
  );

  for (const items of [1, 4, 5, 28, 100]) {
    const seen: string[] = [];
    for (let page = 0; ; page += 1) {
      const body = (await (
        await get(app, `${PATH}?start=2026-11-20&items=${items}&page=${page}`, both)
      ).json()) as Envelope;
      assert.equal(body.stats.total_pages, Math.ceil(28 / items), `items=${items}`);
      assert.equal(body.stats.total_rows, 28, `items=${items}`);
      assert.ok(body.data.every((r) => r.agency === agencyOf(r.orderno)));
      seen.push(...body.data.map((r) => r.orderno));
      if (body.data.length < items) break;
      assert.ok(page < 40, 'paging ends');
    }
    assert.deepEqual(
      seen,
      all.data.map((r) => r.orderno),
      `items=${items}: the streamed order, each row once`,
    );
  }

  // Naming one agency still narrows the report to it.
  const ppz = (await (
    await get(app, `${PATH}?start=2026-11-20&items=-1&agency=PPZ`, both)
  ).json()) as Envelope;
  assert.deepEqual(
    ppz.data.map((r) => r.orderno),
    ['PPZ-0', 'PPZ-1', 'PPZ-2', 'PPZ-3', 'PPZ-4'],
  );
  // An empty agency is a mistake, not a request for everything.
  const empty = await get(app, `${PATH}?start=2026-11-20&agency=`, both);
  assert.equal(empty.status, 400);
  assert.deepEqual(
    (await problemOf(empty)).errors?.map((e) => e.pointer),
    ['/agency'],
  );
  // A signed GET fixes one agency (spec 4.2, 5.2): without agency it is refused, and shows nothing.
  const unsigned = await get(app, signGet(PATH, { start: '2026-11-20', items: '-1' }, LZS_KEY, NOW));
  assert.equal(unsigned.status, 401);
  assert.ok(!(await unsigned.text()).includes('LZS-0'));
});

test('a range of days comes by business day, then posting, each posting once at its latest version', async (t) => {
  const app = await startApp(t, {}, { clock: fixedClock(NOW) });
  const at = (day: number) => `2026-11-${day}T10:00:00+08:00`;
  // Postings arrive out of day order: C settles in a later batch, and D arrives late for the 18th.
  const first = [
    bankRecord({ orderno: 'A', agency: 'BANKLZS', time: at(20) }),
    bankRecord({ orderno: 'B', agency: 'BANKPPZ', time: at(19) }),
    bankRecord({ orderno: 'C', agency: 'BANKLZS', time: at(19), status: 'pending' }),
  ];
  const second = [
    bankRecord({ orderno: 'C', agency: 'BANKLZS', time: at(19), status: 'success' }),
    bankRecord({ orderno: 'D', agency: 'BANKLZS', time: at(18) }),
    bankRecord({ orderno: 'E', agency: 'BANKPPZ', time: at(20) }),
  ];
  for (const transactions of [first, second]) {
    assert.equal((await app.postBatch({ transactions })).status, 200);
    await createInProcessRuntime(app.deps).drain();
  }
  const both = { authorization: `Bearer ${await reportToken(app, ['LZS', 'PPZ'], NOW)}` };
  const range = `${PATH}?start=2026-11-18&end=2026-11-20`;
  type Row = Envelope['data'][number] & { business_date: string; status: string };
  const all = (await (await get(app, `${range}&items=-1`, both)).json()) as { data: Row[] };
  assert.deepEqual(
    all.data.map((r) => [r.business_date, r.orderno, r.status]),
    [
      ['2026-11-18', 'D', 'success'],
      ['2026-11-19', 'B', 'success'],
      ['2026-11-19', 'C', 'success'],
      ['2026-11-20', 'A', 'success'],
      ['2026-11-20', 'E', 'success'],
    ],
  );
  for (const [agency, expected] of [
    ['LZS', ['D', 'C', 'A']],
    ['PPZ', ['B', 'E']],
  ] as const) {
    const one = (await (await get(app, `${range}&items=-1&agency=${agency}`, both)).json()) as Envelope;
    assert.deepEqual(
      one.data.map((r) => r.orderno),
      expected,
    );
  }
  // Pages of every size give the stream's order, across the days' boundaries.
  for (const items of [1, 2, 3, 4]) {
    const seen: string[] = [];
    for (let page = 0; page * items < 5; page += 1) {
      const body = (await (await get(app, `${range}&items=${items}&page=${page}`, both)).json()) as Envelope;
      assert.equal(body.stats.total_rows, 5, `items=${items}`);
      seen.push(...body.data.map((r) => r.orderno));
    }
    assert.deepEqual(seen, ['D', 'B', 'C', 'A', 'E'], `items=${items}`);
  }
});

test('every field of spec 2.5 reaches the agency in the zakat report', async (t) => {
  const app = await startApp(t, {}, { clock: fixedClock(NOW) });
  const record = bankRecord({ orderno: 'FULL-1', email: 'aisyah@example.my' });
  record.data = {
    ...record.data,
    email: 'Keluarga.Aisyah@Example.MY',
    zakat_address: 'No 1, Jalan Damai',
    zakat_postcode: '40100',
    zakat_city: 'Shah Alam',
    zakat_amount: '150.5',
  };
  const fitrah = fitrahRecord({ orderno: 'FULL-2' });
  assert.equal((await app.postBatch({ transactions: [record, fitrah] })).status, 200);
  await createInProcessRuntime(app.deps).drain();
  const token = await reportToken(app, ['LZS'], NOW);
  const body = (await (
    await get(app, `${PATH}?start=2026-11-20&items=-1`, { authorization: `Bearer ${token}` })
  ).json()) as { data: Record<string, unknown>[] };
  const [full, fitrahRow] = body.data;
  assert.deepEqual(full, {
    orderno: 'FULL-1',
    created_date: '2026-11-20 09:15:23',
    business_date: '2026-11-20',
    status: 'success',
    amount: '150.50',
    name: 'Nur Aisyah binti Ahmad',
    email: 'aisyah@example.my',
    data_email: 'keluarga.aisyah@example.my',
    zakat_name: 'Nur Aisyah binti Ahmad',
    zakat_ic_no: '850312105432',
    zakat_phone: '0123456789',
    zakat_address: 'No 1, Jalan Damai',
    zakat_postcode: '40100',
    zakat_city: 'Shah Alam',
    zakat_state: 'selangor',
    zakat_type: 'zakat_pendapatan',
    zakat_type_raw: 'zakat_pendapatan',
    zakat_year: '2026',
    zakat_amount: '150.50',
    zakat_rate: null,
    zakat_dependant: null,
    exceptions: ['EMAIL_MISMATCH'],
    agency: 'LZS',
  });
  assert.deepEqual(
    [fitrahRow?.zakat_type, fitrahRow?.zakat_rate, fitrahRow?.zakat_dependant, fitrahRow?.zakat_amount],
    ['fitrah', '7.00', 4, '28.00'],
  );
});
