/**
 * The PostgreSQL reports' streams (core/store/keyset.ts): every row once, in report order, read 1,000 at a
 * time by keyset, each read a statement of its own; nothing held between reads, however the caller stops
 * reading or pauses.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { pgDashboardReads } from '../../core/store/pg/dashboard-reads.ts';
import { pgPaymentReport } from '../../core/store/pg/payment-report.ts';
import { openPgPool, type PgDb } from '../../core/store/pg/pool.ts';
import { pgZakatReport } from '../../core/store/pg/zakat-report.ts';
import { isStoreOutage } from '../../core/store/outage.ts';
import { onCleanup } from '../helpers.ts';
import { openTestPg, testPgUrl } from '../support/pg-stores.ts';

const DAY = { firstDay: '2026-11-20', lastDay: '2026-11-21' };

/**
 * `n` payments of `agency`, order numbers O000001 up: the first `tied` made in one millisecond (a chunk
 * boundary falls among them), the rest a second apart.
 */
async function seedPayments(db: PgDb, agency: string, n: number, tied = 0): Promise<void> {
  await db.run(
    `INSERT INTO agencies (code, name, created_at) VALUES ($1, $1, now()) ON CONFLICT DO NOTHING`,
    [agency],
  );
  await db.run(
    `INSERT INTO payments (order_no, agency_code, ref_no, amount_sen, email, return_url, status, created_at,
       updated_at)
     SELECT $2 || lpad(i::text, 6, '0'), $1, 'R' || i, 1000, 'p@example.my', '', 'success',
       timestamptz '2026-11-20T00:00:00Z' + greatest(i - $4, 0) * interval '1 second', now()
     FROM generate_series(1, $3) AS i`,
    [agency, agency === 'LZS' ? 'O' : 'P', n, tied],
  );
}

/**
 * `n` normalised postings of LZS on 2026-11-20, ids 1 up, and a second version of every tenth, each version
 * in LZS's ledger.
 */
async function seedPostings(db: PgDb, n: number): Promise<void> {
  await db.run(
    `INSERT INTO normalised_postings (posting_id, version, batch_id, sink, orderno, bank_agency, status,
       amount_sen, name, email, time_utc, business_date, received_date, exceptions, normalised_at)
     SELECT i, v, 'b', 'LZS', 'Z' || i, 'BANKLZS', 'success', 1000 * v, 'Nur', 'n@example.my',
       timestamptz '2026-11-20T01:00:00Z', '2026-11-20', '2026-11-20', '[]', now()
     FROM generate_series(1, $1) AS i, generate_series(1, 2) AS v WHERE v = 1 OR i % 10 = 0`,
    [n],
  );
  await db.run(
    `INSERT INTO ledger_entries (sink, posting_id, version, business_date, received_date, is_adjustment,
       status, amount_sen, exceptions, created_at, received_at)
     SELECT sink, posting_id, version, business_date, received_date, 0, status, amount_sen, exceptions,
       now(), now()
     FROM normalised_postings`,
  );
}

async function collect<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const row of rows) out.push(row);
  return out;
}

async function openTransactions(db: PgDb): Promise<number> {
  const row = await db.row<{ n: number }>(
    `SELECT count(*) AS n FROM pg_stat_activity
     WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
  );
  return row?.n ?? -1;
}

test('every report stream gives each row once, in report order, across its 1,000-row reads and ties of one millisecond', async (t) => {
  const db = await openTestPg(t);
  await seedPayments(db, 'LZS', 2500, 1500);
  await seedPayments(db, 'PPZ', 1200, 1100);
  await seedPostings(db, 2300);
  const inOrder = (sql: string) => db.rows<{ orderNo: string }>(sql);

  const lzs = (
    await inOrder(`SELECT order_no AS "orderNo" FROM payments WHERE agency_code = 'LZS'
    ORDER BY created_at, order_no`)
  ).map((r) => r.orderNo);
  const both = (
    await inOrder(`SELECT order_no AS "orderNo" FROM payments ORDER BY created_at, order_no`)
  ).map((r) => r.orderNo);
  assert.equal(lzs.length, 2500);
  assert.equal(new Set(both).size, 3700);

  const report = pgPaymentReport(db);
  const orderNos = async (rows: AsyncIterable<{ orderNo: string }>) =>
    (await collect(rows)).map((r) => r.orderNo);
  assert.deepEqual(await orderNos(report.all({ agency: 'LZS', ...DAY })), lzs);
  assert.deepEqual(
    await orderNos(report.all({ agency: ['LZS', 'PPZ'], ...DAY })),
    both,
    'two agencies, merged',
  );
  assert.deepEqual(await orderNos(pgDashboardReads(db).paymentRows({ agency: 'LZS', ...DAY })), lzs);

  const postings = await collect(
    pgZakatReport(db).rows({ sink: 'LZS', start: '2026-11-20', end: '2026-11-20' }),
  );
  assert.deepEqual(
    postings.map((r) => r.postingId),
    Array.from({ length: 2300 }, (_, i) => i + 1),
  );
  assert.ok(
    postings.every((r) => r.amountSen === (r.postingId % 10 === 0 ? 2000 : 1000)),
    "each posting's latest version",
  );
  assert.equal(await openTransactions(db), 0);
});

test(
  'readers that stop reading hold no connection: more paused streams than the pool has connections, and it still answers at once',
  { timeout: 60_000 },
  async (t: TestContext) => {
    const url = await testPgUrl();
    await openTestPg(t, url).then(async (seeder) => {
      await seedPayments(seeder, 'LZS', 2500);
      await seedPostings(seeder, 2500);
    });
    // A web process's pool, small: a client that never reads its `items=-1` response pauses its stream.
    const db = openPgPool(url, { max: 2, connectTimeoutMs: 2000 });
    onCleanup(t, () => db.close());
    const streams = [
      ...[1, 2, 3].map(() => pgPaymentReport(db).all({ agency: 'LZS', ...DAY })),
      ...[1, 2, 3].map(() => pgDashboardReads(db).paymentRows({ agency: 'LZS', ...DAY })),
      ...[1, 2, 3].map(() => pgZakatReport(db).rows({ sink: 'LZS', start: '2026-11-20', end: '2026-11-20' })),
    ];
    try {
      for (const [i, stream] of streams.entries()) {
        const first = await stream.next().catch((err: unknown) => {
          assert.fail(`stream ${i} could not start (${isStoreOutage(err) ? 'no connection' : String(err)})`);
        });
        assert.equal(first.done, false);
      }
      const started = Date.now();
      assert.deepEqual(await db.rows('SELECT 1 AS x'), [{ x: 1 }]);
      assert.ok(Date.now() - started < 1000, 'the pool answered at once');
      assert.equal(await openTransactions(db), 0);
    } finally {
      await Promise.all(streams.map((stream) => stream.return(undefined)));
    }
  },
);
