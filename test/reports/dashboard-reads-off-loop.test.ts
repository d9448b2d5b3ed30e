/**
 * The merchant dashboard's reads on SQLite run on threads of their own (decision 244): a page that reads a
 * year of an agency's postings holds its own request, not the web process's event loop, so the gateway,
 * the webhook and the report API answer meanwhile.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import type { SqliteStore } from '../../core/store/index.ts';
import { dashboardReadsOffThread } from '../../core/store/sqlite/dashboard-reads-off-thread.ts';
import { openDatabase } from '../../core/store/sqlite/db.ts';
import { isStoreOutage } from '../../core/store/outage.ts';
import { startApp, tempDir } from '../helpers.ts';
import { DEMO_LZS_ADMIN, signIn } from '../support/dashboard.ts';
import { SQLITE_APP } from '../support/test-database.ts';

const ENTRIES = 100_000;
const FLAGGED_EVERY = 1_000;

/**
 * ENTRIES ledger entries of LZS over a year, with their normalised postings, written straight into the
 * file (the pipeline would take minutes); one in FLAGGED_EVERY carries an exception code.
 */
function seedLedger(file: string): void {
  const db = new Database(file);
  try {
    db.pragma('busy_timeout = 5000');
    // Rows of no bank posting: the dashboard reads the ledger and the normalised rows only.
    db.pragma('foreign_keys = OFF');
    db.transaction(() => {
      db.prepare(
        `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?)
         INSERT INTO normalised_postings (posting_id, version, batch_id, sink, orderno, bank_agency, status,
           amount_sen, name, email, time_utc, business_date, received_date, exceptions, normalised_at)
         SELECT 1000000 + i, 1, 'bat_seed', 'LZS', 'SEED-' || i, 'BANKLZS', 'success', 1000, 'Nur', 'n@example.my',
           '2026-01-01T00:00:00.000Z', date('2025-12-01', '+' || (i * 360 / ?) || ' days'), '2026-01-01',
           CASE WHEN i % ? = 0 THEN '["NAME_MISSING"]' ELSE '[]' END, '2026-01-01T00:00:00.000Z' FROM s`,
      ).run(ENTRIES, ENTRIES, FLAGGED_EVERY);
      db.prepare(
        `INSERT INTO ledger_entries (sink, posting_id, version, business_date, received_date, is_adjustment,
           status, amount_sen, exceptions, created_at)
         SELECT sink, posting_id, version, business_date, received_date, 0, status, amount_sen, exceptions,
           '2026-01-01T00:00:00.000Z' FROM normalised_postings WHERE batch_id = 'bat_seed'`,
      ).run();
    })();
  } finally {
    db.close();
  }
}

test('other requests are answered while a dashboard page reads a year of postings', async (t) => {
  const app = await startApp(t, { ...SQLITE_APP });
  seedLedger((app.deps.store as SqliteStore).file);
  const dashboard = await signIn(app, DEMO_LZS_ADMIN, 'LZS');
  // Every posting of the year with an exception code: no index answers it, every entry is looked at.
  const slowPath = '/dashboard/a/LZS/postings?start=2025-12-01&end=2026-11-30&code=any';

  let slowDone = false;
  const slow = dashboard.get(slowPath).then(async (response) => {
    const text = await response.text();
    slowDone = true;
    return { status: response.status, text };
  });
  // Small requests, one after another, for as long as the page is being read.
  let answeredMeanwhile = 0;
  while (!slowDone) {
    const version = await fetch(`${app.url}/api/version`);
    assert.equal(version.status, 200);
    await version.arrayBuffer();
    if (!slowDone) answeredMeanwhile += 1;
  }
  const page = await slow;
  assert.equal(page.status, 200);
  assert.match(page.text.replace(/\s+/g, ' '), new RegExp(`of ${ENTRIES / FLAGGED_EVERY}\\b`));
  // On the event loop, the read held every request that came after it: at most the one or two sent
  // before it began were answered. Off the loop, the small requests keep being answered.
  assert.ok(answeredMeanwhile >= 10, `${answeredMeanwhile} requests answered while the page was read`);
});

test('a dashboard read refused on its thread is thrown on the request thread with its code', async (t) => {
  const dir = tempDir(t);
  const file = `${dir}/amil.db`;
  const db = openDatabase(file);
  const reads = dashboardReadsOffThread(`${dir}/missing.db`);
  t.after(async () => {
    await reads.close();
    db.close();
  });
  await assert.rejects(
    reads.postingCodes({ agency: 'LZS', firstDay: '2026-11-01', lastDay: '2026-11-30' }),
    (err: Error & { code?: string }) => err.code === 'SQLITE_CANTOPEN',
  );
  // The same read on the file that exists.
  const onFile = dashboardReadsOffThread(file);
  t.after(() => onFile.close());
  assert.deepEqual(
    await onFile.postingCodes({ agency: 'LZS', firstDay: '2026-11-01', lastDay: '2026-11-30' }),
    [],
  );
});

test('dashboard reads past the threads and their queue are refused as a busy store (503), the rest answered', async (t) => {
  const dir = tempDir(t);
  const db = openDatabase(`${dir}/amil.db`);
  const reads = dashboardReadsOffThread(`${dir}/amil.db`);
  t.after(async () => {
    await reads.close();
    db.close();
  });
  // Sent at once, before the first thread is up: two threads and a queue of 32 take 34 of them.
  const outcomes = await Promise.allSettled(
    Array.from({ length: 50 }, () => reads.callbacksPage({ agency: 'LZS' }, 50, 0)),
  );
  const refused = outcomes.filter((o) => o.status === 'rejected');
  const answered = outcomes.filter((o) => o.status === 'fulfilled');
  assert.ok(refused.length >= 50 - 34, `${refused.length} refused`);
  assert.ok(answered.length >= 32, `${answered.length} answered`);
  for (const outcome of refused) assert.ok(isStoreOutage(outcome.reason), String(outcome.reason));
  // Once the queue has drained, reads are answered again.
  assert.equal((await reads.callbacksPage({ agency: 'LZS' }, 50, 0)).total, 0);
});

test('the payments export streams every matching payment in order, chunk by chunk from the threads', async (t) => {
  const dir = tempDir(t);
  const file = `${dir}/amil.db`;
  const db = openDatabase(file);
  const reads = dashboardReadsOffThread(file);
  t.after(async () => {
    await reads.close();
    db.close();
  });
  db.pragma('foreign_keys = OFF');
  // 2,500 payments of one day, a fifth of them by card: three chunks of the whole, one of the card ones.
  db.prepare(
    `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 2500)
     INSERT INTO payments (order_no, agency_code, ref_no, amount_sen, email, return_url, status, payment_method,
       created_at, updated_at)
     SELECT printf('EXP-%05d', i), 'LZS', 'R' || i, 1000, 'p@example.my', 'https://m.example/r', 'success',
       CASE WHEN i % 5 = 0 THEN 'card' ELSE 'fpx' END,
       strftime('%Y-%m-%dT%H:%M:%fZ', '2026-11-20T01:00:00', '+' || (i % 700) || ' seconds'),
       '2026-11-20T01:00:00.000Z' FROM s`,
  ).run();
  const day = { agency: 'LZS', firstDay: '2026-11-20', lastDay: '2026-11-20' };
  const streamed = async (filter: typeof day & { method?: 'card' }) => {
    const keys: string[] = [];
    for await (const row of reads.paymentRows(filter)) keys.push(`${row.createdAt} ${row.orderNo}`);
    return keys;
  };
  const expected = (method: string | null) =>
    db
      .prepare<{ method: string | null }, { key: string }>(
        `SELECT created_at || ' ' || order_no AS key FROM payments
         WHERE @method IS NULL OR payment_method = @method ORDER BY created_at, order_no`,
      )
      .all({ method })
      .map((r) => r.key);
  assert.deepEqual(await streamed(day), expected(null));
  assert.equal((await streamed(day)).length, 2500);
  assert.deepEqual(await streamed({ ...day, method: 'card' }), expected('card'));
});
