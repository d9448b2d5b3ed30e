/**
 * Callback leases and finishes (issue 17, decisions 195, 264), on both engines: the due callbacks leased
 * straight from their rows, each once however many ask at once, with the key to sign with; finishes asked
 * for together share a statement (PostgreSQL) or a group commit (SQLite), one failing finish fails alone, a
 * retry is the callback's next_attempt_at (no outbox row), and each caller is answered only once its write is
 * readable from another connection.
 */
import assert from 'node:assert/strict';
import { openPgStore } from '../../core/store/pg/index.ts';
import type { CallbackLease } from '../../core/store/index.ts';
import { onCleanup } from '../helpers.ts';
import { forEachEngine, onBothEngines, type EngineStore } from '../support/engines.ts';
import { ORDER_AT, callbackToMerchant, newOrder, payOrder } from '../support/orders.ts';
import { freshTestDatabase } from '../support/test-database.ts';

const AT = ORDER_AT;
const LATER = '2026-11-20T02:05:00.000Z';
const LEASE = '2026-11-20T02:06:00.000Z';
const DELIVERED = { at: LATER, statusCode: 200, latencyMs: 3, error: null, responsePrefix: '' };

/** Pays `count` orders of LZS (orderNos `${prefix}${i}`): each queues one callback; their ids. */
async function paidOrders(
  store: EngineStore,
  count: number,
  prefix = 'B',
  result: { status: 'success' | 'pending'; code: string } = { status: 'success', code: '00' },
): Promise<number[]> {
  for (let i = 0; i < count; i += 1) {
    const orderNo = `${prefix}${i}`;
    await store.orders.createOrder(newOrder(orderNo));
    await payOrder(store.orders, orderNo, AT, result);
  }
  const rows = await store.sql<{ id: number }>(
    `SELECT id FROM callbacks WHERE order_no LIKE '${prefix}%' ORDER BY id`,
  );
  return rows.map((r) => Number(r.id));
}

/** PostgreSQL: the next transaction id (each statement or transaction that writes takes one). */
async function nextXid(store: EngineStore): Promise<number> {
  const [row] = await store.sql<{ xmax: string }>(
    `SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xmax`,
  );
  return Number(row!.xmax);
}

const leasedIds = (leases: CallbackLease[][]) =>
  leases
    .flat()
    .map((l) => l.callback.id)
    .sort((a, b) => a - b);

onBothEngines(
  'leases asked for at once take each due callback once, oldest due first, each with the agency key to sign with',
  async (_t, store) => {
    await store.addAgency('LZS');
    const ids = await paidOrders(store, 32);
    const before = store.engine === 'postgresql' ? await nextXid(store) : 0;
    const first = await store.callbacks.leaseDue(8, LATER, LEASE);
    if (store.engine === 'postgresql') {
      const statements = (await nextXid(store)) - before;
      assert.ok(statements <= 1, `${statements} writing statements for one lease of 8`);
    }
    // Seven more processes asking at once, 8 each: 64 asked for in all, 32 due.
    const rest = await Promise.all(
      Array.from({ length: 7 }, () => store.callbacks.leaseDue(8, LATER, LEASE)),
    );
    const leases = [first, ...rest];
    assert.deepEqual(leasedIds(leases), ids, 'every callback leased, none twice');
    for (const { callback, apiKey } of leases.flat()) {
      assert.equal(apiKey, 'key-LZS');
      assert.equal(callback.agencyCode, 'LZS');
      assert.equal(callback.state, 'queued');
      assert.equal(callback.attempts, 0);
      assert.deepEqual(JSON.parse(callback.fields), { orderNo: callback.orderNo, status: 'success' });
    }
    const [leased] = await store.sql<{ n: number }>(
      `SELECT count(*) AS n FROM callbacks WHERE lease_until = '${LEASE}'`,
    );
    assert.equal(Number(leased!.n), 32);
    assert.deepEqual(await store.callbacks.leaseDue(8, LATER, LEASE), [], 'none left: every one is leased');
    const [outbox] = await store.sql<{ n: number }>(
      `SELECT count(*) AS n FROM outbox WHERE queue = 'callbacks'`,
    );
    assert.equal(Number(outbox!.n), 0, 'no outbox row for a callback');
  },
);

onBothEngines(
  'a callback is due at its next_attempt_at, and leased again once its lease has ended',
  async (_t, store) => {
    await store.addAgency('LZS');
    const [first, second] = await paidOrders(store, 2);
    const failing = { ...DELIVERED, statusCode: 500, responsePrefix: 'down' };
    const [lease] = await store.callbacks.leaseDue(1, LATER, LEASE);
    assert.equal(lease?.callback.id, first, 'oldest due first');
    // Retried at 02:10; the second, never tried, is due before it.
    await store.callbacks.finishAttempt(first!, failing, {
      state: 'queued',
      nextAttemptAt: '2026-11-20T02:10:00.000Z',
    });
    const next = await store.callbacks.leaseDue(5, LATER, LEASE);
    assert.deepEqual(
      next.map((l) => l.callback.id),
      [second],
      'the retry is not due yet',
    );
    const atRetry = await store.callbacks.leaseDue(5, '2026-11-20T02:10:00.000Z', '2026-11-20T02:11:00.000Z');
    // The second's lease (to 02:06) has ended unfinished, so it is due again too, and due first.
    assert.deepEqual(
      atRetry.map((l) => [l.callback.id, l.callback.attempts]),
      [
        [second, 0],
        [first, 1],
      ],
      'due at its time',
    );
    // Leased and never finished (its process died): taken again once the lease has ended, not before.
    assert.deepEqual(
      await store.callbacks.leaseDue(5, '2026-11-20T02:10:59.000Z', '2026-11-20T02:12:00.000Z'),
      [],
    );
    const again = await store.callbacks.leaseDue(5, '2026-11-20T02:11:00.000Z', '2026-11-20T02:12:00.000Z');
    assert.deepEqual(
      again.map((l) => l.callback.id).sort((a, b) => a - b),
      [first, second],
    );
  },
);

onBothEngines('a lease carries the agency key of the moment it is taken', async (_t, store) => {
  await store.addAgency('LZS');
  await paidOrders(store, 2);
  const [before] = await store.callbacks.leaseDue(1, LATER, LEASE);
  assert.equal(before?.apiKey, 'key-LZS');
  await store.agencies.rotateKey('LZS', 'key-LZS-2', new Date(LATER));
  const [after] = await store.callbacks.leaseDue(1, LATER, LEASE);
  assert.equal(after?.apiKey, 'key-LZS-2', 'a rotated key signs the next attempt');
});

onBothEngines(
  'each lease and each finish is answered only once it is readable from another connection',
  async (_t, store) => {
    await store.addAgency('LZS');
    const ids = await paidOrders(store, 12);
    const leaseSeen = await Promise.all(
      ids.map(async () => {
        const [lease] = await store.callbacks.leaseDue(1, LATER, LEASE);
        const [row] = await store.sql<{ lease: string | null }>(
          `SELECT lease_until AS lease FROM callbacks WHERE id = ${lease!.callback.id}`,
        );
        return row!.lease !== null;
      }),
    );
    assert.deepEqual(leaseSeen, Array(12).fill(true));
    const stateSeen = await Promise.all(
      ids.map(async (id) => {
        await store.callbacks.finishAttempt(id, DELIVERED, { state: 'delivered' });
        const [row] = await store.sql<{ state: string }>(`SELECT state FROM callbacks WHERE id = ${id}`);
        return row!.state;
      }),
    );
    assert.deepEqual(stateSeen, Array(12).fill('delivered'));
  },
);

onBothEngines(
  'one failing finish in a batch fails alone, and the others of its batch are recorded',
  async (_t, store) => {
    await store.addAgency('LZS');
    const ids = await paidOrders(store, 3);
    const results = await Promise.allSettled([
      store.callbacks.finishAttempt(ids[0]!, DELIVERED, { state: 'delivered' }),
      // No such callback: its attempt's foreign key refuses it.
      store.callbacks.finishAttempt(999_999, DELIVERED, { state: 'delivered' }),
      store.callbacks.finishAttempt(ids[1]!, DELIVERED, { state: 'delivered' }),
      store.callbacks.finishAttempt(ids[2]!, DELIVERED, { state: 'delivered' }),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    const states = await store.sql<{ state: string; attempts: number }>(
      'SELECT state, attempts FROM callbacks ORDER BY id',
    );
    assert.deepEqual(
      states.map((s) => [s.state, Number(s.attempts)]),
      [
        ['delivered', 1],
        ['delivered', 1],
        ['delivered', 1],
      ],
    );
    const [attempts] = await store.sql<{ n: number }>('SELECT count(*) AS n FROM callback_attempts');
    assert.equal(Number(attempts!.n), 3);
  },
);

onBothEngines(
  'finishes of one batch each record their verdict, and a retry stays superseded once superseded',
  async (_t, store) => {
    await store.addAgency('LZS');
    const [delivered, retried, gone] = await paidOrders(store, 3);
    const [superseded] = await paidOrders(store, 1, 'P', { status: 'pending', code: '09' });
    // A pending order paid meanwhile: its callback is superseded by the newer one while being delivered.
    await store.orders.settle(
      'P0',
      { status: 'success', code: '00', txnId: 'T-P0', txnTime: '20261120100500', source: 'test' },
      LATER,
      callbackToMerchant,
    );
    const [, newer] = await store.callbacks.ofOrder('P0');
    const failing = { ...DELIVERED, statusCode: 500, responsePrefix: 'down' };
    await Promise.all([
      store.callbacks.finishAttempt(delivered!, DELIVERED, { state: 'delivered' }),
      store.callbacks.finishAttempt(retried!, failing, { state: 'queued', nextAttemptAt: LEASE }),
      store.callbacks.finishAttempt(superseded!, failing, { state: 'queued', nextAttemptAt: LEASE }),
      store.callbacks.finishAttempt(gone!, { ...DELIVERED, statusCode: 410 }, { state: 'gone' }),
    ]);
    const [outbox] = await store.sql<{ n: number }>(
      `SELECT count(*) AS n FROM outbox WHERE queue = 'callbacks'`,
    );
    assert.equal(Number(outbox!.n), 0, 'a retry writes no outbox row');
    const rows = await store.callbacks.list({ limit: 10 });
    const byId = new Map(rows.map((r) => [r.id, r]));
    assert.equal(byId.get(delivered!)?.state, 'delivered');
    assert.equal(byId.get(retried!)?.state, 'queued');
    assert.equal(byId.get(retried!)?.nextAttemptAt, LEASE);
    assert.equal(byId.get(retried!)?.attempts, 1);
    assert.equal(byId.get(superseded!)?.state, 'superseded');
    assert.equal(byId.get(superseded!)?.finishedAt, LATER, 'superseded when the newer one was queued');
    assert.equal(byId.get(newer!.id)?.state, 'queued');
    assert.equal(byId.get(gone!)?.state, 'gone');
    assert.equal(byId.get(gone!)?.finishedAt, LATER);
    // At the retry's time only the callback still queued is due: the superseded one is not sent again.
    const due = await store.callbacks.leaseDue(10, LEASE, '2026-11-20T02:07:00.000Z');
    assert.deepEqual(
      due.map((l) => l.callback.id).sort((a, b) => a - b),
      [retried, newer!.id].sort((a, b) => a! - b!),
    );
  },
);

forEachEngine(
  'two machines asking for the same callbacks at once lease each once, and an older lease holds back a newer',
  async (t, open) => {
    const store = await open();
    if (store.engine === 'sqlite') return t.skip('one SQLite file has one writer: the PostgreSQL statement');
    // A second store on the same database: another machine's pool, whose batches truly overlap ours.
    const url = await freshTestDatabase();
    const first = openPgStore(url);
    const second = openPgStore(url);
    onCleanup(t, async () => {
      await first.close();
      await second.close();
    });
    await first.agencies.create({ code: 'LZS', name: 'LZS', apiKey: 'key-LZS', now: new Date(AT) });
    const ids: number[] = [];
    for (let i = 0; i < 24; i += 1) {
      const orderNo = `M${i}`;
      await first.orders.createOrder(newOrder(orderNo));
      // Each order's first callback (pending) is leased before its second (paid) is queued.
      await payOrder(first.orders, orderNo, AT, { status: 'pending', code: '09' });
      // The even orders' first callbacks leased (in flight: a delivery under way), before the second is
      // queued. The seconds are due only at LATER, so the one due now is this order's first.
      const [older] = await first.callbacks.ofOrder(orderNo);
      if (i % 2 === 0) {
        const [lease] = await first.callbacks.leaseDue(1, AT, LEASE);
        assert.equal(lease?.callback.id, older!.id);
      }
      await first.orders.settle(
        orderNo,
        { status: 'success', code: '00', txnId: `T-${orderNo}`, txnTime: '20261120100500', source: 'test' },
        LATER,
        callbackToMerchant,
      );
      ids.push((await first.callbacks.ofOrder(orderNo))[1]!.id);
    }
    const leases = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? first : second).callbacks.leaseDue(6, LATER, LEASE)),
    );
    // The even orders' older callbacks are still leased (in flight): their newer ones must wait.
    const expected = ids.filter((_, i) => i % 2 === 1).sort((a, b) => a - b);
    assert.deepEqual(leasedIds(leases), expected);
  },
);

onBothEngines(
  'a finish whose lease ran out records its attempt and leaves the lease another process took since',
  async (_t, store) => {
    await store.addAgency('LZS');
    const [id] = await paidOrders(store, 1);
    const [first] = await store.callbacks.leaseDue(1, LATER, LEASE);
    // Its lease (to 02:06) ran out during the attempt; another process leased the callback again.
    const [second] = await store.callbacks.leaseDue(1, LEASE, '2026-11-20T02:08:00.000Z');
    assert.equal(second?.callback.id, id);
    const failing = { ...DELIVERED, statusCode: 500, responsePrefix: 'down' };
    await store.callbacks.finishAttempt(
      id!,
      failing,
      { state: 'queued', nextAttemptAt: '2026-11-20T02:30:00.000Z' },
      first!.leaseUntil,
    );
    const [row] = await store.sql<{ lease: string; attempts: number }>(
      `SELECT lease_until AS lease, attempts FROM callbacks WHERE id = ${id}`,
    );
    assert.equal(Number(row!.attempts), 1, 'the attempt is recorded');
    assert.equal(new Date(row!.lease).toISOString(), '2026-11-20T02:08:00.000Z', "the other's lease stands");
    // The other process's finish ends its own lease.
    await store.callbacks.finishAttempt(id!, DELIVERED, { state: 'delivered' }, second!.leaseUntil);
    const [after] = await store.sql<{ lease: string | null; state: string }>(
      `SELECT lease_until AS lease, state FROM callbacks WHERE id = ${id}`,
    );
    assert.deepEqual([after!.lease, after!.state], [null, 'delivered']);
  },
);
