/**
 * Group commit of checkout orders on SQLite (issue 17): orders that arrive together are written in one
 * transaction, each answered only after that commit, and one order that fails leaves the others whole.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { openStore, type Store } from '../../core/store/index.ts';
import { openDatabase } from '../../core/store/sqlite/db.ts';
import { groupCommitter } from '../../core/store/sqlite/group-commit.ts';
import { onCleanup, tempDir } from '../helpers.ts';
import { ORDER_AT, newOrder, payOrder } from '../support/orders.ts';

const AT = ORDER_AT;

async function storeWithAgency(t: TestContext): Promise<{ store: Store; raw: Database.Database }> {
  const store = openStore(path.join(tempDir(t), 'amil.db'));
  onCleanup(t, () => store.close());
  await store.agencies.create({ code: 'LZS', name: 'Agency LZS', apiKey: 'key-LZS', now: new Date() });
  const raw = new Database(store.file);
  onCleanup(t, () => raw.close());
  return { store, raw };
}

/** Frames in the write-ahead log since `raw` last emptied it: each commit appends at least one. */
function walFrames(raw: Database.Database, mode: 'TRUNCATE' | 'PASSIVE'): number {
  const [row] = raw.pragma(`wal_checkpoint(${mode})`) as { log: number }[];
  return row!.log;
}

void test('forty checkouts that arrive together are committed in fewer commits than orders', async (t) => {
  const { store, raw } = await storeWithAgency(t);
  walFrames(raw, 'TRUNCATE');
  const results = await Promise.all(
    Array.from({ length: 40 }, (_, i) => store.orders.createOrder(newOrder(`G${i}`))),
  );
  assert.equal(results.filter((r) => r.created).length, 40);
  // One commit per order writes at least one frame each (40 or more); one group writes a few pages once.
  const frames = walFrames(raw, 'PASSIVE');
  assert.ok(frames < 20, `${frames} WAL frames for 40 orders`);
  const rows = raw.prepare<[], { n: number }>('SELECT count(*) AS n FROM payments').get();
  assert.equal(rows!.n, 40);
});

void test('an order that fails in a group fails alone and the others of its group are stored', async (t) => {
  const { store, raw } = await storeWithAgency(t);
  const results = await Promise.allSettled([
    store.orders.createOrder(newOrder('A1')),
    // No such agency: the payments row's foreign key refuses it.
    store.orders.createOrder(newOrder('BAD', { agencyCode: 'NOPE' })),
    store.orders.createOrder(newOrder('A2')),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  const stored = raw
    .prepare<[], { orderNo: string }>('SELECT order_no AS orderNo FROM payments ORDER BY 1')
    .all();
  assert.deepEqual(
    stored.map((r) => r.orderNo),
    ['A1', 'A2'],
  );
  const events = raw.prepare<[], { n: number }>(`SELECT count(*) AS n FROM payment_events`).get();
  assert.equal(events!.n, 2, 'the failed order left no event behind');
});

void test('two orders of one refNo in one group create one order, and the second gets the first', async (t) => {
  const { store } = await storeWithAgency(t);
  const [first, second] = await Promise.all([
    store.orders.createOrder(newOrder('S1', { refNo: 'SAME' })),
    store.orders.createOrder(newOrder('S2', { refNo: 'SAME' })),
  ]);
  assert.equal(first.created, true);
  assert.deepEqual(second, { created: false, order: first.order });
});

void test('an order is answered only once its group is committed and readable by another connection', async (t) => {
  const { store, raw } = await storeWithAgency(t);
  const seen = await Promise.all(
    Array.from({ length: 10 }, async (_, i) => {
      await store.orders.createOrder(newOrder(`C${i}`));
      return raw
        .prepare<[string], { n: number }>('SELECT count(*) AS n FROM payments WHERE order_no = ?')
        .get(`C${i}`)!.n;
    }),
  );
  assert.deepEqual(seen, Array(10).fill(1));
});

void test('callbacks leased together share commits, and each is leased once', async (t) => {
  const { store, raw } = await storeWithAgency(t);
  for (let i = 0; i < 20; i++) {
    await store.orders.createOrder(newOrder(`P${i}`));
    await payOrder(store.orders, `P${i}`, AT);
  }
  const ids = raw
    .prepare<[], { id: number }>('SELECT id FROM callbacks ORDER BY id')
    .all()
    .map((r) => r.id);
  assert.equal(ids.length, 20);
  walFrames(raw, 'TRUNCATE');
  const now = '2026-11-20T02:01:00.000Z';
  const until = '2026-11-20T02:02:00.000Z';
  // Seven leases asked for at once, three callbacks each (one more than there are).
  const leases = await Promise.all(Array.from({ length: 7 }, () => store.callbacks.leaseDue(3, now, until)));
  assert.deepEqual(
    leases
      .flat()
      .map((l) => l.callback.id)
      .sort((a, b) => a - b),
    ids,
  );
  const frames = walFrames(raw, 'PASSIVE');
  assert.ok(frames < 10, `${frames} WAL frames for 7 leases`);
  await Promise.all(
    ids.map((id) =>
      store.callbacks.finishAttempt(
        id,
        { at: until, statusCode: 200, latencyMs: 3, error: null, responsePrefix: 'OK' },
        { state: 'delivered' },
      ),
    ),
  );
  const delivered = raw.prepare<[], { n: number }>(
    `SELECT count(*) AS n FROM callbacks WHERE state = 'delivered'`,
  );
  assert.equal(delivered.get()!.n, 20);
});

void test('a group waits for a write lock another connection holds without blocking the thread, and commits once it is free', async (t) => {
  const { store, raw } = await storeWithAgency(t);
  // Another process's worker in the middle of its write: the file's write lock is taken.
  raw.exec('BEGIN IMMEDIATE');
  let settled = false;
  const order = store.orders.createOrder(newOrder('LOCKED')).finally(() => {
    settled = true;
  });
  const t0 = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 50));
  // SQLite's own busy wait would have held this thread (and so this timer) until it gave up.
  assert.ok(Date.now() - t0 < 1000, 'the timer ran while the group waited for the lock');
  assert.equal(settled, false, 'not answered before it is committed');
  raw.exec('COMMIT');
  assert.equal((await order).created, true);
  const rows = raw
    .prepare<[], { n: number }>("SELECT count(*) AS n FROM payments WHERE order_no = 'LOCKED'")
    .get();
  assert.equal(rows!.n, 1);
});

void test("when SQLite undoes a group's whole transaction, every write of the group is refused and none is stored", async (t) => {
  const db = openDatabase(path.join(tempDir(t), 'raw.db'));
  onCleanup(t, () => db.close());
  db.exec('CREATE TABLE notes (text TEXT NOT NULL)');
  const inGroup = groupCommitter(db);
  const insert = db.prepare('INSERT INTO notes (text) VALUES (?)');
  // A write during which SQLite rolls the whole transaction back, as it may on a full disk or an I/O error.
  const results = await Promise.allSettled([
    inGroup(() => insert.run('before')),
    inGroup(() => {
      insert.run('undone');
      db.exec('ROLLBACK');
    }),
    inGroup(() => insert.run('after')),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'rejected', 'rejected'],
  );
  assert.deepEqual(
    db.prepare('SELECT text FROM notes').pluck().all(),
    [],
    'nothing answered as refused is stored',
  );
});
