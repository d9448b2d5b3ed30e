/**
 * What a callback's delivery writes to SQLite's log (decision 237). Its finish changes the callback's state;
 * with the state in the order index, every finish moved one entry of that index, each on a page of its own
 * (order numbers are random), and a drain of 20,000 wrote 215 MB. Now the order index holds no column a
 * delivery changes: callbacks of many orders delivered together write a few shared pages, not one each.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openStore } from '../../core/store/index.ts';
import { onCleanup, tempDir } from '../helpers.ts';
import { deliverAll } from '../support/orders.ts';

const ORDERS = 20_000;
const DELIVERED = 300;
const AT = '2026-11-20T02:00:00.000Z';
const PAGE = 4096;

test('delivering callbacks of many orders writes fewer log pages than callbacks', async (t) => {
  const file = path.join(tempDir(t), 'amil.db');
  const store = openStore(file);
  const raw = new Database(file);
  onCleanup(t, async () => {
    raw.close();
    await store.close();
  });
  await store.agencies.create({ code: 'LZS', name: 'LZS', apiKey: 'key-LZS', now: new Date(AT) });
  // Orders with random numbers, as checkout makes them, each with its callback queued.
  const orderNo = (i: number) => `AM261120${((i * 7919) % ORDERS).toString(36).padStart(6, '0')}X${i}`;
  const payment = raw.prepare(
    `INSERT INTO payments (order_no, agency_code, ref_no, amount_sen, email, return_url, status, created_at, updated_at)
     VALUES (?, 'LZS', ?, 1000, 'payer@example.com', 'https://merchant.example/cb', 'success', ?, ?)`,
  );
  const callback = raw.prepare(
    `INSERT INTO callbacks (order_no, agency_code, status, url, fields, created_at, next_attempt_at)
     VALUES (?, 'LZS', 'success', 'https://merchant.example/cb', '{}', ?, ?)`,
  );
  raw.transaction(() => {
    for (let i = 0; i < ORDERS; i += 1) {
      payment.run(orderNo(i), `REF-${i}`, AT, AT);
      // Only the callbacks delivered below are due now: the rest are retries due tomorrow.
      const id = i + 1;
      callback.run(orderNo(i), AT, id > 5000 && id <= 5000 + DELIVERED ? AT : '2026-11-21T02:00:00.000Z');
    }
  })();
  assert.equal(Number(raw.pragma('page_size', { simple: true })), PAGE);
  raw.pragma('wal_checkpoint(TRUNCATE)');
  assert.equal(statSync(`${file}-wal`).size, 0, 'the log starts empty');

  // Callbacks queued one after another (their rows side by side), of orders spread over the whole index,
  // leased and delivered as the job does.
  const ids = Array.from({ length: DELIVERED }, (_, k) => 5001 + k);
  const until = '2026-11-20T02:00:40.000Z';
  const leases = await store.callbacks.leaseDue(DELIVERED + 10, AT, until);
  assert.deepEqual(
    leases.map((l) => l.callback.id),
    ids,
  );
  await deliverAll(store.callbacks, ids, AT);
  const delivered = raw
    .prepare<[], { n: number }>(`SELECT count(*) AS n FROM callbacks WHERE state = 'delivered'`)
    .get()!.n;
  assert.equal(delivered, DELIVERED);

  // Each frame of the log is one page written (a 32-byte header, then 24 bytes before each page).
  const frames = (statSync(`${file}-wal`).size - 32) / (PAGE + 24);
  assert.ok(frames < DELIVERED / 2, `${frames} pages written for ${DELIVERED} deliveries`);

  // What reads the index still reads an order's own rows, with the table's statistics too: superseding an
  // order's queued callback (at every settlement), the lease's check of its older callbacks, its history.
  raw.exec('ANALYZE');
  for (const sql of [
    `UPDATE callbacks SET state = 'superseded', finished_at = ? WHERE order_no = ? AND state = 'queued'`,
    `SELECT 1 FROM callbacks o WHERE o.order_no = ? AND o.id < ? AND o.lease_until > ?`,
    `SELECT id FROM callbacks WHERE order_no = ? ORDER BY id`,
  ]) {
    const params = Array.from({ length: sql.split('?').length - 1 }, () => 'x');
    const plan = raw
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
      .all(...params)
      .map((r) => r.detail);
    assert.ok(
      plan.some((d) => d.includes('INDEX callbacks_by_order (order_no=?')),
      `${sql}: ${plan.join(' | ')}`,
    );
  }
});
