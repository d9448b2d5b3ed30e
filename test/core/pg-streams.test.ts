/**
 * The PostgreSQL reports' streams (core/store/pg/snapshot-read.ts): a cursor in one read-only snapshot on a
 * connection of its own, ended however the caller stops reading.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pgPaymentReport } from '../../core/store/pg/payment-report.ts';
import type { PgDb } from '../../core/store/pg/pool.ts';
import { openTestPg } from '../support/pg-stores.ts';

async function seedPayments(db: PgDb, n: number): Promise<void> {
  await db.run(`INSERT INTO agencies (code, name, created_at) VALUES ('LZS', 'LZS', now())`);
  await db.run(
    `INSERT INTO payments (order_no, agency_code, ref_no, amount_sen, email, return_url, status, created_at,
       updated_at)
     SELECT 'O' || lpad(i::text, 6, '0'), 'LZS', 'R' || i, 1000, 'p@example.my', '', 'success',
       timestamptz '2026-11-20T00:00:00Z' + i * interval '1 second', now()
     FROM generate_series(1, $1) AS i`,
    [n],
  );
}

async function openTransactions(db: PgDb): Promise<number> {
  const row = await db.row<{ n: number }>(
    `SELECT count(*) AS n FROM pg_stat_activity
     WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
  );
  return row?.n ?? -1;
}

test('a stream the caller stops after one row ends its transaction before its connection is reused', async (t) => {
  const db = await openTestPg(t);
  await seedPayments(db, 2500);
  const report = pgPaymentReport(db);
  const filter = { agency: 'LZS', firstDay: '2026-11-20', lastDay: '2026-11-21' };
  for (let i = 0; i < 3; i += 1) {
    for await (const row of report.all(filter)) {
      assert.equal(row.orderNo, 'O000001');
      break;
    }
  }
  assert.equal(await openTransactions(db), 0);
  // The next statement on that connection is a write of its own, committed: not one inside a read-only
  // transaction left open.
  await db.run(`INSERT INTO agencies (code, name, created_at) VALUES ('MAIWP', 'MAIWP', now())`);
  const other = await db.pool.connect();
  try {
    const seen = await other.query<{ n: number }>(`SELECT count(*) AS n FROM agencies WHERE code = 'MAIWP'`);
    assert.equal(seen.rows[0]?.n, 1);
  } finally {
    other.release();
  }
  let count = 0;
  for await (const row of report.all(filter)) {
    count += 1;
    assert.equal(typeof row.amountSen, 'number');
  }
  assert.equal(count, 2500);
  assert.equal(await openTransactions(db), 0);
});
