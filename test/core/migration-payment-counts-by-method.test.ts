/**
 * SQLite migration 026 and PostgreSQL migration 025 (decision 243) count payments by method too. An
 * installation upgraded with payments already made gets its counts rebuilt from them, by method, and the
 * triggers then move a payment's count when its method changes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { onBothEngines, type EngineStore } from '../support/engines.ts';
import { newOrder, payOrder, startPayment } from '../support/orders.ts';

const AT = '2026-11-20T02:00:00.000Z';
const COUNTS = `SELECT agency_code, day, approved, method, n FROM payment_day_counts WHERE n > 0
  ORDER BY agency_code, day, approved, method`;

const MIGRATION = {
  sqlite: '../../core/store/sqlite/migrations/026_payment_day_counts_by_method.sql',
  postgresql: '../../core/store/pg/migrations/025_payment_day_counts_by_method.sql',
} as const;
/** The later migration of the same counts (their figures, decision 251), applied after it as an upgrade would. */
const LATER = {
  sqlite: '../../core/store/sqlite/migrations/031_payment_day_figures.sql',
  postgresql: '../../core/store/pg/migrations/032_payment_day_figures.sql',
} as const;

// The counts as the release before kept them: by agency, day and approval only.
const BEFORE = {
  sqlite: `DROP TRIGGER payments_count_insert; DROP TRIGGER payments_count_delete; DROP TRIGGER payments_count_update;
    DROP TABLE payment_day_counts;
    CREATE TABLE payment_day_counts (agency_code TEXT NOT NULL, day TEXT NOT NULL, approved INTEGER NOT NULL,
      n INTEGER NOT NULL CHECK (n >= 0), PRIMARY KEY (agency_code, day, approved)) STRICT, WITHOUT ROWID;
    INSERT INTO payment_day_counts SELECT agency_code, date(created_at, '+8 hours'), status = 'success', count(*)
      FROM payments GROUP BY 1, 2, 3;
    CREATE TRIGGER payments_count_insert AFTER INSERT ON payments BEGIN SELECT 1; END;
    CREATE TRIGGER payments_count_delete AFTER DELETE ON payments BEGIN SELECT 1; END;
    CREATE TRIGGER payments_count_update AFTER UPDATE ON payments BEGIN SELECT 1; END;`,
  postgresql: `ALTER TABLE payment_day_counts DROP COLUMN sum_sen, DROP COLUMN failed_n, DROP COLUMN started_n;
    ALTER TABLE payment_day_count_deltas DROP COLUMN sum_sen, DROP COLUMN failed_n, DROP COLUMN started_n;
    ALTER TABLE payment_day_counts DROP CONSTRAINT payment_day_counts_pkey;
    ALTER TABLE payment_day_counts DROP COLUMN method;
    DELETE FROM payment_day_counts;
    INSERT INTO payment_day_counts SELECT agency_code, amil_kl_day(created_at), (status = 'success')::integer,
      count(*) FROM payments GROUP BY 1, 2, 3;
    ALTER TABLE payment_day_counts ADD PRIMARY KEY (agency_code, day, approved);`,
} as const;

/** The day counts with every appended row folded in (PostgreSQL appends them: decision 246). */
async function foldedCounts(store: EngineStore) {
  await store.orders.foldDayCounts();
  return store.sql(COUNTS);
}

async function started(store: EngineStore, orderNo: string, paymentMethod: 'card' | 'ewallet') {
  await store.orders.createOrder(newOrder(orderNo, { agencyCode: 'LZS', at: AT }));
  await startPayment(store.orders, orderNo, AT, paymentMethod);
}

onBothEngines('an upgraded installation counts its payments by method', async (_t, store) => {
  await store.addAgency('LZS');
  await store.orders.createOrder(newOrder('U1', { agencyCode: 'LZS', at: AT }));
  await store.orders.createOrder(newOrder('U2', { agencyCode: 'LZS', at: AT }));
  await payOrder(store.orders, 'U2', AT);
  await started(store, 'U3', 'card');
  await started(store, 'U4', 'card');
  await started(store, 'U5', 'ewallet');
  const expected = [
    { agency_code: 'LZS', day: '2026-11-20', approved: 0, method: '', n: 1 },
    { agency_code: 'LZS', day: '2026-11-20', approved: 0, method: 'card', n: 2 },
    { agency_code: 'LZS', day: '2026-11-20', approved: 0, method: 'ewallet', n: 1 },
    { agency_code: 'LZS', day: '2026-11-20', approved: 1, method: 'fpx', n: 1 },
  ];
  assert.deepEqual(await foldedCounts(store), expected, 'kept by the triggers');

  await store.write(BEFORE[store.engine]);
  await store.write(readFileSync(new URL(MIGRATION[store.engine], import.meta.url), 'utf8'));
  // Today's store folds the later columns too, so PostgreSQL is read after the later migration only; both
  // later migrations rebuild the counts again (test/core/payment-day-figures.test.ts checks that rebuild).
  if (store.engine === 'sqlite')
    assert.deepEqual(await store.sql(COUNTS), expected, 'rebuilt by migration 026');
  await store.write(readFileSync(new URL(LATER[store.engine], import.meta.url), 'utf8'));
  assert.deepEqual(await foldedCounts(store), expected, 'rebuilt by the migration');

  // The migration's triggers move a count with its payment's method.
  await store.write(`UPDATE payments SET payment_method = 'ewallet' WHERE order_no = 'U3'`);
  assert.deepEqual(await foldedCounts(store), [
    expected[0],
    { ...expected[1], n: 1 },
    { ...expected[2], n: 2 },
    expected[3],
  ]);
  const page = await store.dashboardReads.paymentsPage(
    { agency: 'LZS', firstDay: '2026-11-20', lastDay: '2026-11-20', method: 'ewallet' },
    10,
    0,
  );
  assert.equal(page.total, 2);
  assert.deepEqual(page.rows.map((r) => r.orderNo).sort(), ['U3', 'U5']);
});
