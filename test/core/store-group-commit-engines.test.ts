/**
 * Group commit on both engines (issue 17): checkout orders and callback finishes that arrive together
 * share transactions, one failing write fails alone, and each caller is answered only after its commit.
 */
import assert from 'node:assert/strict';
import { forEachEngine, onBothEngines, type EngineStore } from '../support/engines.ts';
import { ORDER_AT, deliverAll, newOrder, payOrder } from '../support/orders.ts';

const AT = ORDER_AT;

/** PostgreSQL: the next transaction id. Each transaction that writes takes one (a group has no savepoints). */
async function nextXid(store: EngineStore): Promise<number> {
  const [row] = await store.sql<{ xmax: string }>(
    `SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xmax`,
  );
  return Number(row!.xmax);
}

onBothEngines(
  'one failing order in a group fails alone, and the others of its group are stored',
  async (_t, store) => {
    await store.addAgency('LZS');
    const results = await Promise.allSettled([
      store.orders.createOrder(newOrder('A1')),
      // No such agency: the payments row's foreign key refuses it.
      store.orders.createOrder(newOrder('BAD', { agencyCode: 'NOPE' })),
      store.orders.createOrder(newOrder('A2')),
      store.orders.createOrder(newOrder('A3')),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    const stored = await store.sql<{ orderNo: string }>(
      'SELECT order_no AS "orderNo" FROM payments ORDER BY 1',
    );
    assert.deepEqual(
      stored.map((r) => r.orderNo),
      ['A1', 'A2', 'A3'],
    );
    const [events] = await store.sql<{ n: number }>('SELECT count(*) AS n FROM payment_events');
    assert.equal(Number(events!.n), 3, 'the failed order left no event behind');
  },
);

onBothEngines(
  'each order is answered only once it is committed and readable from another connection',
  async (_t, store) => {
    await store.addAgency('LZS');
    const seen = await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        await store.orders.createOrder(newOrder(`C${i}`));
        const [row] = await store.sql<{ n: number }>(
          `SELECT count(*) AS n FROM payments WHERE order_no = 'C${i}'`,
        );
        return Number(row!.n);
      }),
    );
    assert.deepEqual(seen, Array(16).fill(1));
  },
);

onBothEngines(
  'two orders of one refNo in one group create one order, and the second gets the first',
  async (_t, store) => {
    await store.addAgency('LZS');
    const [first, second] = await Promise.all([
      store.orders.createOrder(newOrder('S1', { refNo: 'SAME' })),
      store.orders.createOrder(newOrder('S2', { refNo: 'SAME' })),
    ]);
    assert.equal(first.created, true);
    assert.deepEqual(second, { created: false, order: first.order });
  },
);

forEachEngine(
  'sixteen orders, then their sixteen callback finishes, arriving together take fewer transactions than writes',
  async (t, open) => {
    const store = await open();
    // SQLite's groups are counted in write-ahead-log frames: store-group-commit.test.ts.
    if (store.engine === 'sqlite') return t.skip('counted by transaction ids, a PostgreSQL notion');
    await store.addAgency('LZS');
    const orderNos = Array.from({ length: 16 }, (_, i) => `P${i}`);
    let before = await nextXid(store);
    await Promise.all(orderNos.map((orderNo) => store.orders.createOrder(newOrder(orderNo))));
    const orderTransactions = (await nextXid(store)) - before;
    assert.ok(orderTransactions < 8, `${orderTransactions} transactions for 16 orders`);

    for (const orderNo of orderNos) await payOrder(store.orders, orderNo, AT);
    const ids = (await store.sql<{ id: number }>('SELECT id FROM callbacks ORDER BY id')).map((r) =>
      Number(r.id),
    );
    before = await nextXid(store);
    await deliverAll(store.callbacks, ids, AT);
    const finishTransactions = (await nextXid(store)) - before;
    assert.ok(finishTransactions < 8, `${finishTransactions} transactions for 16 finishes`);
    const [delivered] = await store.sql<{ n: number }>(
      `SELECT count(*) AS n FROM callbacks WHERE state = 'delivered'`,
    );
    assert.equal(Number(delivered!.n), 16);
  },
);

forEachEngine(
  'a relay hands over 500 of 6,000 waiting outbox rows in well under a second',
  async (t, open) => {
    const store = await open();
    // SQLite's hand-over reads the same rows without a lock; the PostgreSQL statement is the one at risk.
    if (store.engine === 'sqlite') return t.skip('the PostgreSQL claim statement');
    await store.sql(
      `INSERT INTO outbox (queue, job_id, payload, created_at)
     SELECT 'callbacks', 'cb.' || i, '{"callbackId": 1}', now() FROM generate_series(1, 6000) AS i`,
    );
    const started = performance.now();
    const handed = await store.outbox.handOver(500, new Date(), async () => {});
    const ms = performance.now() - started;
    assert.equal(handed, 500);
    // A plan that joins every waiting row with every other took seconds here (quadratic in the backlog).
    assert.ok(ms < 1000, `hand-over took ${ms.toFixed(0)} ms`);
  },
);
