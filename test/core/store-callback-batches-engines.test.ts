/**
 * Callback leases and finishes asked for together (issue 17, decision 195), on both engines: on PostgreSQL
 * each batch is one statement, on SQLite one group commit. Each lease is taken once and carries the key to
 * sign with, one failing finish fails alone, a retry's outbox row is written only for a callback still
 * queued, and each caller is answered only once its write is readable from another connection.
 */
import assert from 'node:assert/strict';
import { openPgStore } from '../../core/store/pg/index.ts';
import type { CallbackClaim } from '../../core/store/index.ts';
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

const leasedIds = (claims: CallbackClaim[]) =>
  claims.flatMap((c) => ('claimed' in c ? [c.claimed.id] : [])).sort((a, b) => a - b);

onBothEngines(
  'thirty-two leases asked for together are each taken once, each with the agency key to sign with',
  async (_t, store) => {
    await store.addAgency('LZS');
    const ids = await paidOrders(store, 32);
    const before = store.engine === 'postgresql' ? await nextXid(store) : 0;
    // Each asked for twice at once, as two jobs of one callback would.
    const claims = await Promise.all([...ids, ...ids].map((id) => store.callbacks.claim(id, LATER, LEASE)));
    assert.deepEqual(leasedIds(claims), ids, 'every callback leased, none twice');
    assert.ok(claims.every((c) => 'claimed' in c || c.refused === 'busy'));
    for (const claim of claims) {
      if (!('claimed' in claim)) continue;
      assert.equal(claim.apiKey, 'key-LZS');
      assert.equal(claim.claimed.agencyCode, 'LZS');
      assert.equal(claim.claimed.state, 'queued');
      assert.equal(claim.claimed.attempts, 0);
      assert.deepEqual(JSON.parse(claim.claimed.fields), {
        orderNo: claim.claimed.orderNo,
        status: 'success',
      });
    }
    if (store.engine === 'postgresql') {
      const statements = (await nextXid(store)) - before;
      assert.ok(statements <= 8, `${statements} writing statements for 64 leases`);
    }
    const [leased] = await store.sql<{ n: number }>(
      `SELECT count(*) AS n FROM callbacks WHERE lease_until IS NOT NULL`,
    );
    assert.equal(Number(leased!.n), 32);
  },
);

onBothEngines('a lease carries the agency key of the moment it is taken', async (_t, store) => {
  await store.addAgency('LZS');
  const [first, second] = await paidOrders(store, 2);
  const before = await store.callbacks.claim(first!, LATER, LEASE);
  assert.ok('claimed' in before);
  assert.equal(before.apiKey, 'key-LZS');
  await store.agencies.rotateKey('LZS', 'key-LZS-2', new Date(LATER));
  const after = await store.callbacks.claim(second!, LATER, LEASE);
  assert.ok('claimed' in after);
  assert.equal(after.apiKey, 'key-LZS-2', 'a rotated key signs the next attempt');
});

onBothEngines(
  'each lease and each finish is answered only once it is readable from another connection',
  async (_t, store) => {
    await store.addAgency('LZS');
    const ids = await paidOrders(store, 12);
    const leaseSeen = await Promise.all(
      ids.map(async (id) => {
        await store.callbacks.claim(id, LATER, LEASE);
        const [row] = await store.sql<{ lease: string | null }>(
          `SELECT lease_until AS lease FROM callbacks WHERE id = ${id}`,
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
  'finishes of one batch each complete their own outbox row, and a retry is queued only while still queued',
  async (_t, store) => {
    await store.addAgency('LZS');
    const [delivered, retried, gone] = await paidOrders(store, 3);
    const [superseded] = await paidOrders(store, 1, 'P', { status: 'pending', code: '09' });
    const jobRow = async (jobId: string) =>
      (
        await store.sql<{ id: number; payload: string; sent: string | null; done: string | null }>(
          `SELECT id, payload, sent_at AS sent, done_at AS done FROM outbox WHERE job_id = '${jobId}'`,
        )
      )[0];
    // A pending order paid meanwhile: its callback is superseded by the newer one while being delivered.
    await store.orders.settle(
      'P0',
      { status: 'success', code: '00', txnId: 'T-P0', txnTime: '20261120100500', source: 'test' },
      LATER,
      callbackToMerchant,
    );
    const [, newer] = await store.callbacks.ofOrder('P0');
    const embedded = await jobRow(`callback:${delivered}:0`);
    const failing = { ...DELIVERED, statusCode: 500, responsePrefix: 'down' };
    await Promise.all([
      store.callbacks.finishAttempt(delivered!, DELIVERED, { state: 'delivered' }, { sent: embedded!.id }),
      store.callbacks.finishAttempt(
        retried!,
        failing,
        { state: 'queued', nextAttemptAt: LEASE, jobId: `callback:${retried}:1` },
        { done: `callback:${retried}:0` },
      ),
      store.callbacks.finishAttempt(
        superseded!,
        failing,
        { state: 'queued', nextAttemptAt: LEASE, jobId: `callback:${superseded}:1` },
        { done: `callback:${superseded}:0` },
      ),
      store.callbacks.finishAttempt(gone!, { ...DELIVERED, statusCode: 410 }, { state: 'gone' }),
    ]);
    const after = await jobRow(`callback:${delivered}:0`);
    assert.notEqual(after!.sent, null, 'embedded mode: the row is sent');
    assert.notEqual(after!.done, null, 'and done, in the same write');
    assert.notEqual((await jobRow(`callback:${retried}:0`))!.done, null, 'Redis mode: the job is done');
    assert.equal((await jobRow(`callback:${retried}:1`))!.payload, `{"callbackId":${retried}}`);
    assert.equal(await jobRow(`callback:${superseded}:1`), undefined, 'no retry for a superseded callback');
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
      const [older] = await first.callbacks.ofOrder(orderNo);
      if (i % 2 === 0) assert.ok('claimed' in (await first.callbacks.claim(older!.id, AT, LEASE)));
      await first.orders.settle(
        orderNo,
        { status: 'success', code: '00', txnId: `T-${orderNo}`, txnTime: '20261120100500', source: 'test' },
        AT,
        callbackToMerchant,
      );
      ids.push((await first.callbacks.ofOrder(orderNo))[1]!.id);
    }
    const claims = await Promise.all(
      [...ids, ...ids].map((id, i) => (i % 2 === 0 ? first : second).callbacks.claim(id, LATER, LEASE)),
    );
    // The even orders' older callbacks are still leased (in flight): their newer ones must wait.
    const expected = ids.filter((_, i) => i % 2 === 1).sort((a, b) => a - b);
    assert.deepEqual(leasedIds(claims), expected);
    assert.ok(claims.every((c) => 'claimed' in c || c.refused === 'busy'));
  },
);
