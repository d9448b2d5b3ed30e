/**
 * The callbacks' lease reads the due callbacks' own index (decision 264). Every process that delivers
 * callbacks leases them every poll and after every wake; a lease that walked the callbacks table (most of it
 * delivered long ago) would cost each lease the whole history. With statistics taken while nearly every
 * callback was queued (a backlog that arrived faster than it drained, then ANALYZE: the trap of decision
 * 256), PostgreSQL must still read callbacks_due, in the plan made for the lease's values and in the generic
 * plan it switches a named statement to, and the lease must return the oldest due callbacks. With statistics
 * taken before a backlog was due, the lease must still read it in the index's order (decision 266).
 */
import assert from 'node:assert/strict';
import { onBothEngines, onPostgres, type EngineStore } from '../support/engines.ts';
import { LEASE_DUE } from '../../core/store/pg/callbacks.ts';
import { CALLBACKS_WAITING } from '../../core/store/pg/ops.ts';

const NOW = '2026-11-20T02:00:00.000Z';
const UNTIL = '2026-11-20T02:00:40.000Z';
const CALLBACKS = 20_000;
const DELIVERED = 15_000;
/** The backlog held back while analysed (the callbacks after it were due then). */
const HELD = 18_000;

/** `n` paid orders of LZS, each with its callback queued at NOW, in id order; in slices of 5,000 rows. */
async function queuedCallbacks(store: EngineStore, n: number): Promise<void> {
  const slice = (from: number, to: number, row: (i: number) => string) =>
    Array.from({ length: to - from }, (_, k) => row(from + k)).join(', ');
  for (let from = 0; from < n; from += 5000) {
    const to = Math.min(n, from + 5000);
    await store.write(
      `INSERT INTO payments (order_no, agency_code, ref_no, amount_sen, email, return_url, status, created_at, updated_at)
       VALUES ${slice(from, to, (i) => `('P${i}', 'LZS', 'R${i}', 1000, 'payer@example.my', 'https://m.example/cb', 'success', '${NOW}', '${NOW}')`)}`,
    );
    await store.write(
      `INSERT INTO callbacks (id, order_no, agency_code, status, url, fields, created_at, next_attempt_at)
       VALUES ${slice(from, to, (i) => `(${i + 1}, 'P${i}', 'LZS', 'success', 'https://m.example/cb', '{}', '${NOW}', '${NOW}')`)}`,
    );
  }
}

/** On PostgreSQL, no autovacuum of the callbacks: an ANALYZE of its own would make the stale statistics fresh. */
async function keepStatistics(store: EngineStore): Promise<void> {
  if (store.engine === 'postgresql')
    await store.write('ALTER TABLE callbacks SET (autovacuum_enabled = off)');
}

onBothEngines(
  'the lease reads the due callbacks, oldest first, even when the statistics say nearly every one is queued',
  async (_t, store) => {
    await store.addAgency('LZS');
    await queuedCallbacks(store, CALLBACKS);
    await keepStatistics(store);
    await store.write('ANALYZE');
    // Most of the backlog delivered since the statistics were taken (not analysed again).
    await store.write(
      `UPDATE callbacks SET state = 'delivered', next_attempt_at = NULL, finished_at = '${NOW}'
       WHERE id <= ${DELIVERED}`,
    );
    if (store.engine === 'postgresql') {
      const at = `'${NOW}'::timestamptz`;
      const literals = [at, '32', `'${UNTIL}'::timestamptz`];
      const text = LEASE_DUE.text.replace(/\$(\d+)/g, (_m, k: string) => literals[Number(k) - 1]!);
      const plan = (await store.sql<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`)).map((r) => r['QUERY PLAN']);
      const shown = plan.join(' | ');
      assert.ok(
        plan.some((step) => /Index (Only )?Scan using callbacks_due/.test(step)),
        `the lease reads callbacks_due: ${shown}`,
      );
      assert.doesNotMatch(shown, /Seq Scan on callbacks/, `the lease walks the callbacks: ${shown}`);
      // The callbacks' line of the metrics, read at every scrape: callbacks_due, never the table.
      const waiting = (await store.sql<{ 'QUERY PLAN': string }>(`EXPLAIN ${CALLBACKS_WAITING.text}`))
        .map((r) => r['QUERY PLAN'])
        .join(' | ');
      assert.doesNotMatch(waiting, /Seq Scan on callbacks/, `the scrape walks the callbacks: ${waiting}`);
      // The check for an older callback of the order still leased: that order's own index range.
      assert.match(shown, /Index (Only )?Scan using callbacks_by_order/, `the older-lease check: ${shown}`);
      // The generic plan: node-postgres runs the lease as a named statement, which PostgreSQL plans without
      // its values once it has run five times; that plan must read the same indexes.
      await store.write('SET plan_cache_mode = force_generic_plan');
      await store.write(`PREPARE lease_generic AS ${LEASE_DUE.text}`);
      const generic = (
        await store.sql<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE lease_generic(${literals.join(', ')})`)
      ).map((r) => r['QUERY PLAN']);
      const genericShown = generic.join(' | ');
      assert.match(genericShown, /\$1/, `a generic plan, with its parameters unbound: ${genericShown}`);
      assert.match(genericShown, /Index (Only )?Scan using callbacks_due/, `generic: ${genericShown}`);
      assert.doesNotMatch(
        genericShown,
        /Seq Scan on callbacks/,
        `generic walks the callbacks: ${genericShown}`,
      );
      assert.match(genericShown, /Index (Only )?Scan using callbacks_by_order/, `generic: ${genericShown}`);
      await store.write('DEALLOCATE lease_generic');
      await store.write('RESET plan_cache_mode');
    }
    const leased = await store.callbacks.leaseDue(32, NOW, UNTIL);
    assert.deepEqual(
      leased.map((l) => l.callback.id),
      Array.from({ length: 32 }, (_, i) => DELIVERED + 1 + i),
    );
    const next = await store.callbacks.leaseDue(32, NOW, UNTIL);
    assert.equal(next[0]?.callback.id, DELIVERED + 33, 'the next lease takes the next ones');
  },
);

/** The plan of the lease with these values, as PostgreSQL makes it for a statement's first five runs. */
async function customPlan(store: EngineStore, values: readonly string[], analyze = false): Promise<string> {
  const text = LEASE_DUE.text.replace(/\$(\d+)/g, (_m, k: string) => values[Number(k) - 1]!);
  // ANALYZE runs the lease: in a transaction rolled back, so nothing is leased.
  await store.write('BEGIN');
  try {
    const rows = await store.sql<{ 'QUERY PLAN': string }>(
      `EXPLAIN ${analyze ? '(ANALYZE, COSTS OFF) ' : ''}${text}`,
    );
    return rows.map((r) => r['QUERY PLAN']).join(' | ');
  } finally {
    await store.write('ROLLBACK');
  }
}

onPostgres(
  'the lease reads a backlog in the index order, even when the statistics were taken before it was due',
  async (_t, store) => {
    // A backlog queued while not due (a merchant's retries, callbacks held through an outage), analysed then;
    // all of it due since (not analysed again). With each older-callback check estimated to keep one row in
    // 200, PostgreSQL planned a bitmap scan of every due callback, the check run on each and a sort: 120 ms
    // a lease with 18,000 due, each of a worker's connections for its first five leases, and again whenever
    // the pool opened a new one.
    await store.addAgency('LZS');
    await queuedCallbacks(store, CALLBACKS);
    await keepStatistics(store);
    // Analysed with a tenth due (delivered since), the rest held back; then the rest all due.
    await store.write(`UPDATE callbacks SET next_attempt_at = '2999-01-01T00:00:00Z' WHERE id <= ${HELD}`);
    await store.write('ANALYZE');
    await store.write(
      `UPDATE callbacks SET state = 'delivered', next_attempt_at = NULL, finished_at = '${NOW}'
       WHERE id > ${HELD}`,
    );
    await store.write(`UPDATE callbacks SET next_attempt_at = '${NOW}' WHERE id <= ${HELD}`);
    const values = [`'${NOW}'::timestamptz`, '32', `'${UNTIL}'::timestamptz`];
    const plan = await customPlan(store, values);
    assert.match(
      plan,
      /Index (Only )?Scan using callbacks_due/,
      `the lease reads callbacks_due in order: ${plan}`,
    );
    assert.doesNotMatch(
      plan,
      /Bitmap Index Scan on callbacks_due/,
      `a bitmap scan reads every due callback: ${plan}`,
    );
    assert.doesNotMatch(plan, /Seq Scan on callbacks/, `the lease walks the callbacks: ${plan}`);
    // Run: the older-callback check made for about as many callbacks as the lease takes, not the backlog.
    const ran = await customPlan(store, values, true);
    const loops = [...ran.matchAll(/Index (?:Only )?Scan using callbacks_by_order[^|]*loops=(\d+)/g)];
    assert.ok(loops.length > 0, `the check ran: ${ran}`);
    for (const [, n] of loops) assert.ok(Number(n) <= 64, `the check ran ${n} times: ${ran}`);
    const leased = await store.callbacks.leaseDue(32, NOW, UNTIL);
    assert.deepEqual(
      leased.map((l) => l.callback.id),
      Array.from({ length: 32 }, (_, i) => i + 1),
    );
  },
);
