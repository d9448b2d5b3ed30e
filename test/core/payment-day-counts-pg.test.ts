/**
 * PostgreSQL's payment day counts (decision 246): a payment appends its change of count as a row of its
 * own, so a payment in flight holds no lock that another payment of its agency and day needs; the upkeep's
 * fold adds the rows into `payment_day_counts`, and the counts read the same before and after.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newOrder, payOrder } from '../support/orders.ts';
import { storeWithTwoSessions } from '../support/pg-stores.ts';

const AT = '2026-11-20T02:00:00.000Z';
const DAY = { agency: 'LZS', firstDay: '2026-11-20', lastDay: '2026-11-20' };

/** A payment of LZS on DAY, as a session's SQL would insert it (the triggers run as for any insert). */
const insertPayment = (orderNo: string) =>
  `INSERT INTO payments (order_no, agency_code, ref_no, amount_sen, email, return_url, status, created_at, updated_at)
   VALUES ('${orderNo}', 'LZS', '${orderNo}', 1000, 'p@example.my', 'https://m.example/r', 'pending', '${AT}', '${AT}')`;

test('a payment in flight holds nothing another payment of its agency and day waits for (postgresql)', async (t) => {
  const { store, first, second } = await storeWithTwoSessions(t);
  await store.agencies.create({ code: 'LZS', name: 'Agency LZS', apiKey: 'key-LZS', now: new Date() });
  await store.orders.createOrder(newOrder('BEFORE', { agencyCode: 'LZS', at: AT }));
  assert.ok((await store.orders.foldDayCounts()) > 0, 'the first payment folded into the counts');

  // One payment's transaction open (not committed yet), another of the same agency and day beside it.
  await first.query('BEGIN');
  await first.query(insertPayment('HELD'));
  await second.query(`SET lock_timeout = '500ms'`);
  // With a count row updated in the payment's transaction this waited for the first one's commit, and
  // gave up after the lock timeout.
  await second.query(insertPayment('BESIDE'));
  await first.query('COMMIT');

  const total = async () => (await store.dashboardReads.paymentsPage(DAY, 10, 0)).total;
  assert.equal(await total(), 3, 'the folded count and the appended rows, summed');
  const report = await store.paymentReport.page(DAY, 10, 0);
  assert.equal(report.total, 3);
  assert.equal(await store.orders.foldDayCounts(), 2, 'the two appended rows folded');
  assert.equal(await total(), 3, 'the same after the fold');
  const [counts] = (
    await second.query<{ n: number }>(
      `SELECT sum(n)::int AS n FROM payment_day_counts WHERE agency_code = 'LZS' AND day = '2026-11-20'`,
    )
  ).rows;
  assert.equal(counts?.n, 3, 'held in payment_day_counts');
  const left = await second.query('SELECT 1 FROM payment_day_count_deltas');
  assert.equal(left.rowCount, 0, 'nothing left to fold');
});

// A fold that holds only a payment's leaving of a count (-1: the order was created before the last fold and
// settled since) failed on the counts' n >= 0, and so did every fold after it: the appended rows piled up.
test('a fold after a payment settles adds its -1 to the counted row (postgresql)', async (t) => {
  const { store, second } = await storeWithTwoSessions(t);
  await store.agencies.create({ code: 'LZS', name: 'Agency LZS', apiKey: 'key-LZS', now: new Date() });
  await store.orders.createOrder(newOrder('FOLDED', { agencyCode: 'LZS', at: AT }));
  assert.equal(await store.orders.foldDayCounts(), 1);
  await payOrder(store.orders, 'FOLDED', AT);
  assert.ok((await store.orders.foldDayCounts()) >= 4, 'the start and the settlement folded');
  const counts = await second.query<{ approved: number; method: string; n: number }>(
    `SELECT approved, method, n FROM payment_day_counts WHERE agency_code = 'LZS' ORDER BY approved, method`,
  );
  // Started and settled in one fold: its pending FPX row came and went, and is not written at all.
  assert.deepEqual(counts.rows, [
    { approved: 0, method: '', n: 0 },
    { approved: 1, method: 'fpx', n: 1 },
  ]);
  assert.equal((await second.query('SELECT 1 FROM payment_day_count_deltas')).rowCount, 0, 'nothing left');
});

// One process folds at a time: the others skip. The lock is taken by a statement before the fold's own, so
// the fold's snapshot sees what the previous fold committed (taken inside the fold, a fold could read from
// before the previous one's commit and insert one of its new keys again, failing on the primary key).
test('a fold skips while another holds the fold, and folds folding at once each count once (postgresql)', async (t) => {
  const { store, first, second } = await storeWithTwoSessions(t);
  await store.agencies.create({ code: 'LZS', name: 'Agency LZS', apiKey: 'key-LZS', now: new Date() });
  await store.orders.createOrder(newOrder('P0', { agencyCode: 'LZS', at: AT }));
  await first.query('BEGIN');
  await first.query(`SELECT pg_advisory_xact_lock(${0x616d6463})`);
  assert.equal(await store.orders.foldDayCounts(), 0, 'another process is folding');
  await first.query('COMMIT');
  assert.equal(await store.orders.foldDayCounts(), 1);

  // Payments of new days (new keys) and folds at once, as the upkeep of several machines runs.
  const days = Array.from(
    { length: 20 },
    (_, i) => `2026-11-${String(i + 1).padStart(2, '0')}T02:00:00.000Z`,
  );
  const folds: Promise<number>[] = [];
  for (const [i, at] of days.entries()) {
    await store.orders.createOrder(newOrder(`P${i + 1}`, { agencyCode: 'LZS', at }));
    folds.push(store.orders.foldDayCounts(), store.orders.foldDayCounts());
  }
  await Promise.all(folds);
  await store.orders.foldDayCounts();
  const [counted] = (
    await second.query<{ n: number }>(
      `SELECT sum(n)::int AS n FROM payment_day_counts WHERE agency_code = 'LZS'`,
    )
  ).rows;
  assert.equal(counted?.n, 21, 'every payment counted once');
  assert.equal((await second.query('SELECT 1 FROM payment_day_count_deltas')).rowCount, 0, 'nothing left');
});
