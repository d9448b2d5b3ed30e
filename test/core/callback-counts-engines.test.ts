/**
 * An agency's callbacks counted by state (the dashboard's callbacks tabs and the overview's failing count):
 * on SQLite a count row per agency and state, kept in the writing transaction (decision 239); on PostgreSQL
 * rows appended by each statement and folded now and again (decision 245), so that no delivery locks a
 * count another one needs. Either way the counts are those of the callbacks, exactly, while deliveries
 * finish and folds run at once.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AttemptVerdict } from '../../core/store/index.ts';
import { onBothEngines, onPostgres, type EngineStore } from '../support/engines.ts';
import { newOrder, payOrder } from '../support/orders.ts';
import { createStoreUpkeep } from '../../pipeline/store-upkeep.ts';
import type { Deps } from '../../core/deps.ts';
import pino from 'pino';

const AT = '2026-11-20T02:00:00.000Z';
const LATER = '2026-11-20T02:05:00.000Z';
const LEASE = '2026-11-20T02:06:00.000Z';
const RETRY_AT = '2026-11-20T02:10:00.000Z';

/** Pays `count` orders, alternately of LZS and PPZ: each queues one callback. Their ids. */
async function paidCallbacks(store: EngineStore, count: number): Promise<number[]> {
  await store.addAgency('LZS');
  await store.addAgency('PPZ');
  for (let i = 0; i < count; i += 1) {
    const orderNo = `CC-${i}`;
    await store.orders.createOrder(newOrder(orderNo, { agencyCode: i % 2 === 0 ? 'LZS' : 'PPZ', at: AT }));
    await payOrder(store.orders, orderNo, AT);
  }
  const rows = await store.sql<{ id: number }>(`SELECT id FROM callbacks ORDER BY id`);
  return rows.map((r) => Number(r.id));
}

/** What every outcome of an attempt leaves: delivered, given up, refused, or to be tried again. */
function verdictOf(i: number): AttemptVerdict {
  const verdicts: AttemptVerdict[] = [
    { state: 'delivered' },
    { state: 'dead' },
    { state: 'gone' },
    { state: 'queued', nextAttemptAt: RETRY_AT },
  ];
  return verdicts[i % verdicts.length]!;
}

/** The agency's callbacks counted straight from the rows, as the tabs show them. */
async function countedFromRows(store: EngineStore, agency: string): Promise<Record<string, number>> {
  const rows = await store.sql<{ state: string; failing: number | boolean; n: number }>(
    `SELECT state, (state IN ('dead', 'gone') OR (state = 'queued' AND attempts > 0)) AS failing,
       count(*) AS n FROM callbacks WHERE agency_code = '${agency}' GROUP BY 1, 2`,
  );
  const byState: Record<string, number> = { failing: 0 };
  for (const row of rows) {
    byState[row.state] = (byState[row.state] ?? 0) + Number(row.n);
    if (row.failing === true || row.failing === 1) byState.failing! += Number(row.n);
  }
  return byState;
}

async function assertCountsExact(store: EngineStore, where: string): Promise<void> {
  for (const agency of ['LZS', 'PPZ']) {
    const expected = await countedFromRows(store, agency);
    const page = await store.dashboardReads.callbacksPage({ agency }, 5, 0);
    assert.deepEqual(page.byState, expected, `${where}: ${agency}'s tabs`);
    const overview = await store.dashboardReads.overview(agency, '2026-11-20', '2026-11-20');
    assert.equal(overview.callbacksFailing, expected.failing, `${where}: ${agency}'s overview`);
  }
}

onBothEngines(
  'the counts stay exact while deliveries finish, are superseded and redelivered, and folds run at once',
  async (_t, store) => {
    const ids = await paidCallbacks(store, 48);
    await assertCountsExact(store, 'queued');
    let folded = 0;
    const fold = async () => {
      folded += await store.callbacks.foldCounts();
    };
    const leased = await store.callbacks.leaseDue(100, LATER, LEASE);
    assert.deepEqual(
      leased.map((l) => l.callback.id),
      ids,
      'every callback leased',
    );
    await Promise.all([
      ...ids.map(async (id, i) => {
        const attempt = { at: LATER, statusCode: 200, latencyMs: 3, error: null, responsePrefix: '' };
        await store.callbacks.finishAttempt(id, attempt, verdictOf(i));
        if (i % 6 === 0) await fold();
      }),
      fold(),
      fold(),
    ]);
    await assertCountsExact(store, 'after the deliveries');
    // Orders sent again, and a retrying callback superseded by its order's new one.
    await store.callbacks.redeliver('CC-0', LATER);
    await store.callbacks.redeliver('CC-3', LATER);
    await assertCountsExact(store, 'after two redeliveries');
    await fold();
    await assertCountsExact(store, 'after a fold');
    // A retrying callback's second attempt, delivered: the page shows both attempts, in order.
    const retrying = ids[7]!; // PPZ, to be tried again (CC-3 was superseded by its redelivery)
    const due = await store.callbacks.leaseDue(100, RETRY_AT, '2026-11-20T02:11:00.000Z');
    assert.ok(
      due.some((l) => l.callback.id === retrying),
      'the retry is due at its time',
    );
    const second = { at: RETRY_AT, statusCode: 200, latencyMs: 4, error: null, responsePrefix: 'OK' };
    await store.callbacks.finishAttempt(retrying, second, { state: 'delivered' });
    await assertCountsExact(store, 'after a retry delivered');
    const page = await store.dashboardReads.callbacksPage({ agency: 'PPZ' }, 50, 0);
    for (const row of page.rows) assert.equal(row.attemptLog.length, row.attempts, `callback ${row.id}`);
    assert.deepEqual(
      page.rows.find((r) => r.id === retrying)?.attemptLog.map((a) => a.at),
      [LATER, RETRY_AT],
    );
    // The order's page and the fpxrequest report read the same attempts.
    const order = await store.dashboardReads.order('PPZ', 'CC-7');
    assert.deepEqual(
      order?.callbacks.map((c) => c.attemptLog.map((a) => a.statusCode)),
      [[200, 200]],
    );
    assert.deepEqual(
      (await store.callbacks.ofOrder('CC-7')).map((c) => c.attemptLog.map((a) => a.at)),
      [[LATER, RETRY_AT]],
    );
    if (store.engine === 'postgresql') {
      assert.ok(folded > 0, 'the folds folded rows');
      // Folded: at most one row per agency, state and attempted.
      const [rows] = await store.sql<{ n: number }>('SELECT count(*) AS n FROM callback_count_deltas');
      assert.ok(Number(rows!.n) <= 2 * 5 * 2, `${rows!.n} count rows after the fold`);
      // The tabs read the count rows, not the callbacks: a row added through SQL shows.
      const before = await countedFromRows(store, 'LZS');
      await store.write(
        `INSERT INTO callback_count_deltas (agency_code, state, attempted, n) VALUES ('LZS', 'delivered', true, 1000)`,
      );
      const page = await store.dashboardReads.callbacksPage({ agency: 'LZS' }, 5, 0);
      assert.equal(page.byState.delivered, (before.delivered ?? 0) + 1000);
    } else {
      assert.equal(folded, 0, 'SQLite has nothing to fold');
    }
  },
);

onBothEngines('a settled callback deleted through SQL leaves the counts', async (_t, store) => {
  const ids = await paidCallbacks(store, 4);
  // Settled first: a queued callback is counted live on PostgreSQL, a settled one from its count rows.
  await store.write(`UPDATE callbacks SET state = 'dead', attempts = 3 WHERE id = ${ids[0]}`);
  await assertCountsExact(store, 'after it was given up');
  await store.write(`DELETE FROM callbacks WHERE id = ${ids[0]}`);
  await assertCountsExact(store, 'after the delete');
});

// SQLite's counts came with decision 239, and its migration's test.
onPostgres('an upgraded PostgreSQL installation counts the callbacks it already had', async (_t, store) => {
  await paidCallbacks(store, 6);
  await store.write(`UPDATE callbacks SET state = 'dead', attempts = 8 WHERE order_no = 'CC-1'`);
  // The release before: no count rows, no triggers.
  await store.write('DROP TABLE callback_count_deltas; DROP FUNCTION callbacks_count_settled() CASCADE;');
  await store.write(
    readFileSync(
      new URL('../../core/store/pg/migrations/026_callback_count_deltas.sql', import.meta.url),
      'utf8',
    ),
  );
  await assertCountsExact(store, 'after the migration');
  await store.write(`UPDATE callbacks SET state = 'delivered', attempts = 1 WHERE order_no = 'CC-2'`);
  await assertCountsExact(store, 'after a change the triggers saw');
});

onPostgres(
  'the upkeep folds the count rows the deliveries appended, and the counts stay',
  async (t, store) => {
    const ids = await paidCallbacks(store, 12);
    for (const id of ids)
      await store.write(`UPDATE callbacks SET state = 'delivered', attempts = 1 WHERE id = ${id}`);
    const rows = async () =>
      Number((await store.sql<{ n: number }>('SELECT count(*) AS n FROM callback_count_deltas'))[0]!.n);
    assert.equal(await rows(), 12, 'a row appended per callback settled');
    const upkeep = createStoreUpkeep({ store, logger: pino({ level: 'silent' }) } as unknown as Deps);
    upkeep.start();
    t.after(() => upkeep.stop());
    // Its first look is at start: the rows come down to one per agency, state and attempted.
    const deadline = Date.now() + 10_000;
    while ((await rows()) > 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await rows(), 2, 'LZS and PPZ delivered, one row each');
    await assertCountsExact(store, 'after the upkeep');
  },
);
