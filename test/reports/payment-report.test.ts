import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { UnsecuredJWT } from 'jose';
import { signGet } from '../../core/signatures.ts';
import { fixedClock } from '../../core/clock.ts';
import type { PaymentRow } from '../../core/store/index.ts';
import { problemOf, reportToken, startApp, type TestApp } from '../helpers.ts';
import { appDb } from '../support/app-db.ts';

const LZS_KEY = 'c3b5a0e2-7f1d-4c8e-9a6b-2d4f8e1a3b5c';
const PPZ_KEY = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
const NOW = new Date('2026-11-21T12:00:00+08:00');

interface Envelope {
  status: string;
  data: Record<string, unknown>[];
  stats: { total_pages: number; total_rows: number };
}

/** Until checkout exists, payment rows are made through the store (issue 4). 17 LZS, 4 PPZ. */
/**
 * `count` paid orders AM000000, AM000001, ... of the agency `agencyOf` gives each, on five timestamps
 * they share in turn, written straight into the app's store (hundreds of rows a statement).
 */
async function insertPayments(
  t: TestContext,
  app: TestApp,
  count: number,
  agencyOf: (i: number) => string,
): Promise<void> {
  const db = appDb(t, app);
  for (let start = 0; start < count; start += 500) {
    const rows = Array.from({ length: Math.min(500, count - start) }, (_, k) => start + k);
    await db.run(
      `INSERT INTO payments (order_no, agency_code, ref_no, amount_sen, email, return_url, status, created_at,
         updated_at)
       VALUES ${rows.map(() => "(?, ?, ?, 1000, 'x@example.my', 'http://127.0.0.1/r', 'success', ?, ?)").join(', ')}`,
      rows.flatMap((i) => {
        const at = `2026-11-21T0${i % 5}:00:00.000Z`;
        return [`AM${String(i).padStart(6, '0')}`, agencyOf(i), `R${i}`, at, at];
      }),
    );
  }
}

async function paymentsApp(t: Parameters<typeof startApp>[0]): Promise<TestApp> {
  const app = await startApp(t, {}, { clock: fixedClock(NOW) });
  const make = (agency: string, i: number, overrides: Partial<PaymentRow> = {}): PaymentRow => ({
    orderNo: `AM${agency}${String(i).padStart(4, '0')}`,
    agencyCode: agency,
    refNo: `REF-${i}`,
    extraData: null,
    paymentCategory: 'zakat-fitrah',
    amountSen: 1000 + i,
    addChargeSen: 100,
    email: i % 2 === 0 ? 'ali@example.my' : 'siti@example.my',
    returnUrl: 'http://127.0.0.1/return',
    paymentMethod: 'fpx',
    status: i % 3 === 0 ? 'failed' : 'success',
    debitAuthCode: i % 3 === 0 ? '51' : '00',
    fpxTxnId: `TX${i}`,
    fpxTxnTime: '2026-11-20 10:00:00',
    // 20 Nov 23:59:59 in KL for i = 0 (still the 20th), then the 21st.
    createdAt: i === 0 ? '2026-11-20T15:59:59.000Z' : `2026-11-21T0${i % 10}:00:00.000Z`,
    updatedAt: '2026-11-21T00:00:00.000Z',
    source: 'checkout',
    payLink: null,
    ...overrides,
  });
  for (let i = 0; i < 17; i += 1) await app.deps.store.orders.insert(make('LZS', i), 'test');
  for (let i = 0; i < 4; i += 1) await app.deps.store.orders.insert(make('PPZ', i), 'test');
  return app;
}

const token = (app: TestApp, agencies: string[]) => reportToken(app, agencies, NOW);
const get = async (app: TestApp, url: string, headers: Record<string, string> = {}) =>
  fetch(`${app.url}${url}`, { headers });

test('the payment report: envelope of 2.3, filters, and the paging rule of 4.2', async (t) => {
  const app = await paymentsApp(t);
  const auth = { authorization: `Bearer ${await token(app, ['LZS'])}` };
  const all = (await (
    await get(app, '/api/report/v1/payment?output=json&items=-1', auth)
  ).json()) as Envelope;
  assert.equal(all.status, 'OK');
  assert.equal(all.data.length, 17);
  assert.deepEqual(Object.keys(all.data[0] ?? {}).slice(0, 4), [
    'fpx_seller_order_no',
    'created_date',
    'is_approved',
    'fpx_debit_auth_code',
  ]);
  assert.equal(all.data[0]?.created_date, '2026-11-20 23:59:59');
  assert.equal(all.data[0]?.amount, '10.00');

  const day20 = (await (
    await get(app, '/api/report/v1/payment?start=2026-11-20&end=2026-11-20&items=-1', auth)
  ).json()) as Envelope;
  assert.deepEqual(
    day20.data.map((r) => r.fpx_seller_order_no),
    ['AMLZS0000'],
  );
  const approved = (await (
    await get(app, '/api/report/v1/payment?is_approved=1&items=-1', auth)
  ).json()) as Envelope;
  assert.ok(
    approved.data.length > 0 &&
      approved.data.every((r) => r.is_approved === 1 && r.fpx_debit_auth_code === '00'),
  );
  const one = (await (
    await get(app, '/api/report/v1/payment?seller_order_no=AMLZS0005', auth)
  ).json()) as Envelope;
  assert.deepEqual(
    one.data.map((r) => r.refNo),
    ['REF-5'],
  );

  for (const items of [1, 4, 17, 50]) {
    const seen: unknown[] = [];
    for (let page = 0; page < 40; page += 1) {
      const body = (await (
        await get(app, `/api/report/v1/payment?items=${items}&page=${page}`, auth)
      ).json()) as Envelope;
      seen.push(...body.data.map((r) => r.fpx_seller_order_no));
      if (body.data.length < items) break;
    }
    assert.equal(new Set(seen).size, 17, `items=${items}`);
    assert.equal(seen.length, 17, `items=${items}: no row twice`);
  }
});

test('the order lookup and the payer history stay within the credentials, and history shows events', async (t) => {
  const app = await paymentsApp(t);
  const lzs = { authorization: `Bearer ${await token(app, ['LZS'])}` };
  const byOrder = await get(app, '/api/report/v1/fpxrequest?fpx_seller_order_no=AMLZS0003', lzs);
  assert.equal(byOrder.status, 200);
  const order = ((await byOrder.json()) as { data: { refNo: string; history: { status: string }[] } }).data;
  assert.equal(order.refNo, 'REF-3');
  assert.deepEqual(
    order.history.map((h) => h.status),
    ['failed'],
  );
  assert.equal((await get(app, '/api/report/v1/fpxrequest?refno=REF-3', lzs)).status, 200);
  assert.equal(
    (await get(app, '/api/report/v1/fpxrequest?fpx_seller_order_no=AMPPZ0001', lzs)).status,
    404,
    'another agency: not found',
  );

  const history = (await (
    await get(app, '/api/user/v1/transactions?email=ali@example.my', lzs)
  ).json()) as Envelope;
  assert.ok(
    history.data.length > 0 && history.data.every((r) => r.agency === 'LZS' && r.email === 'ali@example.my'),
  );
  // A token of both agencies sees the payer's payments in each (read in SQL, not filtered after).
  const both = { authorization: `Bearer ${await token(app, ['LZS', 'PPZ'])}` };
  const wider = (await (
    await get(app, '/api/user/v1/transactions?email=ali@example.my', both)
  ).json()) as Envelope;
  assert.deepEqual([...new Set(wider.data.map((r) => r.agency))].sort(), ['LZS', 'PPZ']);
  assert.equal(wider.data.length, history.data.length + wider.data.filter((r) => r.agency === 'PPZ').length);
  assert.equal(
    (await get(app, '/api/user/v1/transactions?email=ali@example.my')).status,
    401,
    'personal data needs auth',
  );
});

test('tenant matrix: every payment endpoint refuses foreign or broken credentials, and leaks nothing', async (t) => {
  const app = await paymentsApp(t);
  const ppzToken = await token(app, ['PPZ']);
  const endpoints = ['/api/report/v1/payment', '/api/report/v1/fpxrequest', '/api/user/v1/transactions'];
  for (const path of endpoints) {
    const query: Record<string, string> = path.endsWith('payment')
      ? {}
      : path.endsWith('fpxrequest')
        ? { refno: 'REF-1' }
        : { email: 'ali@example.my' };
    const cases: [string, string, Record<string, string>, number[]][] = [
      ['no credentials', `${path}?agency=LZS`, {}, [401]],
      ['another agency key', signGet(path, { agency: 'LZS', ...query }, PPZ_KEY, NOW), {}, [401]],
      [
        'a token without LZS',
        `${path}?${new URLSearchParams({ agency: 'LZS', ...query }).toString()}`,
        { authorization: `Bearer ${ppzToken}` },
        [403, 404, 200],
      ],
      [
        'a tampered query',
        signGet(path, { agency: 'LZS', ...query, x: '1' }, LZS_KEY, NOW).replace('x=1', 'x=2'),
        {},
        [401],
      ],
      [
        'an expired exp',
        signGet(path, { agency: 'LZS', ...query }, LZS_KEY, new Date(NOW.getTime() - 120_000)),
        {},
        [401],
      ],
      [
        'a future exp',
        signGet(path, { agency: 'LZS', ...query }, LZS_KEY, new Date(NOW.getTime() + 120_000)),
        {},
        [401],
      ],
      [
        'alg none',
        `${path}?${new URLSearchParams({ agency: 'LZS', ...query }).toString()}`,
        {
          authorization: `Bearer ${new UnsecuredJWT({ agencies: ['LZS'] }).setIssuedAt().setExpirationTime('1h').encode()}`,
        },
        [401],
      ],
    ];
    for (const [what, url, headers, statuses] of cases) {
      const response = await get(app, url, headers);
      assert.ok(statuses.includes(response.status), `${path} ${what}: ${response.status}`);
      const text = await response.text();
      assert.ok(!text.includes('AMLZS'), `${path} ${what}: no LZS data`);
    }
    const good = await get(app, signGet(path, { agency: 'LZS', ...query }, LZS_KEY, NOW));
    assert.equal(good.status, 200, `${path} signed by LZS`);
  }
  const problem = await problemOf(
    await get(app, '/api/report/v1/payment?agency=LZS', { authorization: `Bearer ${ppzToken}` }),
  );
  assert.equal(problem.status, 403);
});

test('items=-1 streams every row once, across chunk boundaries and equal timestamps', async (t) => {
  const app = await startApp(t, {}, { clock: fixedClock(NOW) });
  // Five timestamps shared by 500 orders each: the keyset must break ties by order number.
  await insertPayments(t, app, 2500, () => 'LZS');
  const auth = { authorization: `Bearer ${await token(app, ['LZS'])}` };
  const response = await get(app, '/api/report/v1/payment?items=-1', auth);
  assert.equal(response.status, 200);
  const body = (await response.json()) as Envelope;
  assert.equal(body.data.length, 2500);
  assert.equal(new Set(body.data.map((r) => r.fpx_seller_order_no)).size, 2500);
  assert.equal(body.stats.total_rows, 2500);
});

test('items=-1 counts the rows it sends: payments made while a report downloads are in both its data and its total', async (t) => {
  const app = await startApp(t, {}, { clock: fixedClock(NOW) });
  // More rows than the server's stream, the sockets and the client buffer between them (about 20 MB).
  await insertPayments(t, app, 45_000, () => 'LZS');
  const auth = { authorization: `Bearer ${await token(app, ['LZS'])}` };
  const response = await get(app, '/api/report/v1/payment?items=-1', auth);
  assert.equal(response.status, 200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  const first = await reader.read();
  assert.ok(first.value, 'the download started');
  chunks.push(first.value);
  // The client has read the start and not yet the rest; three payments of the same day are made meanwhile.
  await appDb(t, app).run(
    `INSERT INTO payments (order_no, agency_code, ref_no, amount_sen, email, return_url, status, created_at,
       updated_at)
     VALUES ${['LATE1', 'LATE2', 'LATE3'].map(() => "(?, 'LZS', ?, 1000, 'x@example.my', 'http://127.0.0.1/r', 'success', '2026-11-21T09:00:00.000Z', '2026-11-21T09:00:00.000Z')").join(', ')}`,
    ['LATE1', 'R-LATE1', 'LATE2', 'R-LATE2', 'LATE3', 'R-LATE3'],
  );
  for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Envelope;
  assert.equal(body.data.length, 45_003);
  assert.deepEqual(
    body.data.slice(-3).map((r) => r.fpx_seller_order_no),
    ['LATE1', 'LATE2', 'LATE3'],
    'the payments made after the start come last, in report order',
  );
  assert.equal(body.stats.total_rows, body.data.length, 'total_rows counts the rows sent');
});

test('a token covering several agencies and no agency gets their combined payment report, paged exactly', async (t) => {
  const app = await paymentsApp(t);
  const both = { authorization: `Bearer ${await token(app, ['LZS', 'PPZ'])}` };
  const response = await get(app, '/api/report/v1/payment?items=-1', both);
  assert.equal(response.status, 200);
  const all = (await response.json()) as Envelope;
  assert.equal(all.data.length, 21);
  assert.equal(all.stats.total_rows, 21);
  assert.deepEqual([...new Set(all.data.map((r) => r.agency))].sort(), ['LZS', 'PPZ']);
  assert.ok(
    all.data.every((r) => String(r.fpx_seller_order_no).startsWith(`AM${String(r.agency)}`)),
    'each row says its own agency',
  );
  const keys = all.data.map((r) => `${String(r.created_date)} ${String(r.fpx_seller_order_no)}`);
  assert.deepEqual(keys, [...keys].sort(), 'one order across agencies: created_date, then order number');

  for (const items of [1, 2, 4, 5, 21, 50]) {
    const seen: unknown[] = [];
    for (let page = 0; page < 40; page += 1) {
      const body = (await (
        await get(app, `/api/report/v1/payment?items=${items}&page=${page}`, both)
      ).json()) as Envelope;
      assert.equal(body.stats.total_pages, Math.ceil(21 / items), `items=${items}`);
      seen.push(...body.data.map((r) => r.fpx_seller_order_no));
      if (body.data.length < items) break;
    }
    assert.deepEqual(
      seen,
      all.data.map((r) => r.fpx_seller_order_no),
      `items=${items}: the streamed order, each row once`,
    );
  }

  const approvedPpz = (await (
    await get(app, '/api/report/v1/payment?items=-1&is_approved=1&agency=PPZ', both)
  ).json()) as Envelope;
  assert.deepEqual(
    approvedPpz.data.map((r) => r.fpx_seller_order_no),
    ['AMPPZ0001', 'AMPPZ0002'],
  );
  const byOrder = (await (
    await get(app, '/api/report/v1/payment?seller_order_no=AMPPZ0002', both)
  ).json()) as Envelope;
  assert.deepEqual(
    byOrder.data.map((r) => r.agency),
    ['PPZ'],
  );
  // A signed GET fixes one agency (spec 4.2): without agency it is refused, and shows nothing.
  const unsigned = await get(app, signGet('/api/report/v1/payment', { items: '-1' }, LZS_KEY, NOW));
  assert.equal(unsigned.status, 401);
  assert.ok(!(await unsigned.text()).includes('AMLZS'));
});

test('a combined items=-1 merges the agencies in report order, across chunk boundaries and equal timestamps', async (t) => {
  const app = await startApp(t, {}, { clock: fixedClock(NOW) });
  // Two agencies' orders interleaved on five shared timestamps; PPZ has more than one chunk of its own.
  await insertPayments(t, app, 3000, (i) => (i % 3 === 0 ? 'LZS' : 'PPZ'));
  const auth = { authorization: `Bearer ${await token(app, ['PPZ', 'LZS'])}` };
  const body = (await (await get(app, '/api/report/v1/payment?items=-1', auth)).json()) as Envelope;
  const keys = body.data.map((r) => `${String(r.created_date)} ${String(r.fpx_seller_order_no)}`);
  assert.equal(keys.length, 3000);
  assert.equal(new Set(keys).size, 3000);
  assert.deepEqual(keys, [...keys].sort(), 'created_date, then order number, across both agencies');
  assert.equal(body.stats.total_rows, 3000);
});
