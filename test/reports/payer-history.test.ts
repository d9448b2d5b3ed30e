/**
 * GET /api/user/v1/transactions pages a payer's history as the payment report pages its rows (decision 247):
 * items and page, 100 a page unless asked, items=-1 streamed. An address with thousands of payments is
 * answered a page at a time, never all at once from one statement.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { fixedClock } from '../../core/clock.ts';
import { problemOf, reportToken, startApp, type TestApp } from '../helpers.ts';
import { appDb } from '../support/app-db.ts';

const NOW = new Date('2026-11-21T12:00:00+08:00');
const EMAIL = 'ali@example.my';

interface Envelope {
  status: string;
  data: { fpx_seller_order_no: string; agency: string; email: string; created_date: string }[];
  stats: { total_pages: number; total_rows: number; page: number; items: number };
}

/**
 * `count` payments of `agency` under `email`, numbered from `from`, on five instants they share in turn: the
 * keyset must break ties by order number.
 */
async function insertPayments(
  t: TestContext,
  app: TestApp,
  agency: string,
  count: number,
  { from = 0, email = EMAIL } = {},
): Promise<void> {
  const db = appDb(t, app);
  for (let start = 0; start < count; start += 500) {
    const rows = Array.from({ length: Math.min(500, count - start) }, (_, k) => from + start + k);
    await db.run(
      `INSERT INTO payments (order_no, agency_code, ref_no, amount_sen, email, return_url, status, created_at,
         updated_at)
       VALUES ${rows.map(() => "(?, ?, ?, 1000, ?, 'http://127.0.0.1/r', 'success', ?, ?)").join(', ')}`,
      rows.flatMap((i) => {
        const at = `2026-11-21T0${i % 5}:00:00.000Z`;
        return [`AM${agency}${String(i).padStart(6, '0')}`, agency, `R${agency}${i}`, email, at, at];
      }),
    );
  }
}

/** Newest first, then by order number: the history's order. */
const historyOrder = (rows: { orderNo: string; at: string }[]) =>
  [...rows]
    .sort((a, b) => (a.at === b.at ? (a.orderNo < b.orderNo ? -1 : 1) : a.at < b.at ? 1 : -1))
    .map((r) => r.orderNo);

/** What the store holds for the address in those agencies, in the history's order. */
async function expected(t: TestContext, app: TestApp, agencies: string[]): Promise<string[]> {
  const rows = await appDb(t, app).rows<{ orderNo: string; at: string }>(
    `SELECT order_no AS "orderNo", created_at AS at FROM payments
     WHERE email = ? AND agency_code IN (${agencies.map(() => '?').join(', ')})`,
    [EMAIL, ...agencies],
  );
  return historyOrder(rows);
}

async function history(app: TestApp, query: string, token: string): Promise<Envelope> {
  const response = await fetch(`${app.url}/api/user/v1/transactions?email=${EMAIL}${query}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as Envelope;
}

test('the payer history is paged: 100 rows unless asked, newest first, every row once', async (t) => {
  const app = await startApp(t, {}, { clock: fixedClock(NOW) });
  await insertPayments(t, app, 'LZS', 1234);
  await insertPayments(t, app, 'PPZ', 300);
  await insertPayments(t, app, 'LZS', 50, { from: 5000, email: 'siti@example.my' });
  const lzs = await reportToken(app, ['LZS'], NOW);

  const first = await history(app, '', lzs);
  assert.equal(first.data.length, 100, 'a page of 100 when items is not given');
  assert.deepEqual(first.stats, { total_pages: 13, total_rows: 1234, page: 0, items: 100 });

  // The paging rule of the payment report: from page 0 until a page has fewer rows than items.
  const want = await expected(t, app, ['LZS']);
  for (const items of [100, 500, 1234, 10_000]) {
    const seen: string[] = [];
    for (let page = 0; page <= 20; page += 1) {
      const body = await history(app, `&items=${items}&page=${page}`, lzs);
      assert.deepEqual(body.stats, {
        total_pages: Math.ceil(1234 / items),
        total_rows: 1234,
        page,
        items,
      });
      seen.push(...body.data.map((r) => r.fpx_seller_order_no));
      if (body.data.length < items) break;
    }
    assert.deepEqual(seen, want, `items=${items}: every LZS payment of the address once, in order`);
  }
  const past = await history(app, '&items=100&page=13', lzs);
  assert.deepEqual(past.data, [], 'a page past the end is empty');
  assert.equal(past.stats.total_rows, 1234);
});

test('a token of two agencies pages and streams their payments merged in order', async (t) => {
  const app = await startApp(t, {}, { clock: fixedClock(NOW) });
  // More than one chunk of each agency (1,000 rows), on the same five instants.
  await insertPayments(t, app, 'LZS', 2100);
  await insertPayments(t, app, 'PPZ', 1300);
  const both = await reportToken(app, ['LZS', 'PPZ'], NOW);
  const want = await expected(t, app, ['LZS', 'PPZ']);
  assert.equal(want.length, 3400);

  const paged: string[] = [];
  for (let page = 0; page <= 10; page += 1) {
    const body = await history(app, `&items=700&page=${page}`, both);
    paged.push(...body.data.map((r) => r.fpx_seller_order_no));
    if (body.data.length < 700) break;
  }
  assert.deepEqual(paged, want, 'pages of the combined history');

  const streamed = await history(app, '&items=-1', both);
  assert.deepEqual(
    streamed.data.map((r) => r.fpx_seller_order_no),
    want,
    'items=-1: every row once, in order, across chunk boundaries and equal instants',
  );
  assert.deepEqual(streamed.stats, { total_pages: 1, total_rows: 3400, page: 0, items: -1 });
  assert.ok(streamed.data.every((r) => r.email === EMAIL));

  // agency narrows a token's history to one of its agencies, as in the payment report.
  const ppz = await history(app, '&items=-1&agency=PPZ', both);
  assert.deepEqual(
    ppz.data.map((r) => r.fpx_seller_order_no),
    await expected(t, app, ['PPZ']),
  );
  const lzsToken = await reportToken(app, ['LZS'], NOW);
  const foreign = await fetch(`${app.url}/api/user/v1/transactions?email=${EMAIL}&agency=PPZ`, {
    headers: { authorization: `Bearer ${lzsToken}` },
  });
  assert.equal((await problemOf(foreign)).status, 403, 'an agency the token does not cover');

  const lzsOnly = await history(app, '&items=-1', lzsToken);
  assert.deepEqual(
    lzsOnly.data.map((r) => r.fpx_seller_order_no),
    await expected(t, app, ['LZS']),
    "a token's own agencies only",
  );
});

test('paging parameters out of range are refused with a pointer, like the payment report', async (t) => {
  const app = await startApp(t, {}, { clock: fixedClock(NOW) });
  const lzs = await reportToken(app, ['LZS'], NOW);
  for (const [query, pointer] of [
    ['&items=0', '/items'],
    ['&items=10001', '/items'],
    ['&items=-2', '/items'],
    ['&items=ten', '/items'],
    ['&page=-1', '/page'],
    ['&page=1.5', '/page'],
  ] as const) {
    const response = await fetch(`${app.url}/api/user/v1/transactions?email=${EMAIL}${query}`, {
      headers: { authorization: `Bearer ${lzs}` },
    });
    const problem = await problemOf(response);
    assert.equal(problem.status, 400, query);
    assert.ok(
      problem.errors?.some((e) => e.pointer === pointer),
      `${query}: ${JSON.stringify(problem.errors)}`,
    );
  }
});
