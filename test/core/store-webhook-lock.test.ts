/**
 * The webhook's batches on SQLite when another process (a worker on the same file) holds the write lock:
 * the batch waits on a timer, not in SQLite's sleeping busy handler, so the thread keeps answering; and a
 * batch that fails inside a group is undone alone (decision 201).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { prepareRecord } from '../../ingest/bank-webhook/prepare.ts';
import { openStore, type SqliteStore } from '../../core/store/index.ts';
import { bankRecord, onCleanup, tempDir } from '../helpers.ts';
import { batchInput } from '../support/batches.ts';

const ROUTES = { BANKLZS: { kind: 'agency', agency: 'LZS' } } as const;
const RECEIVED = new Date('2026-11-20T02:00:00.000Z');

async function storeAndRaw(t: TestContext): Promise<{ store: SqliteStore; raw: Database.Database }> {
  const store = openStore(path.join(tempDir(t), 'amil.db'));
  onCleanup(t, () => store.close());
  await store.partners.addPassword({ partnerId: 'demo-bank', label: 'main', hash: 'h1', now: RECEIVED });
  const raw = new Database(store.file);
  onCleanup(t, () => raw.close());
  return { store, raw };
}

const record = (orderno: string) =>
  prepareRecord(bankRecord({ orderno, time: '2026-11-20T09:15:23+08:00' }), ROUTES);

void test('a webhook batch waits for a write lock another connection holds without blocking the thread, and commits once it is free', async (t) => {
  const { store, raw } = await storeAndRaw(t);
  raw.exec('BEGIN IMMEDIATE');
  let settled = false;
  const stored = store.bankPostings.ingestBatch(batchInput([record('LOCK-1')])).finally(() => {
    settled = true;
  });
  const t0 = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 50));
  // SQLite's own busy wait would have held this thread (and so this timer) in steps of up to 100 ms.
  assert.ok(
    Date.now() - t0 < 150,
    `the timer ran ${Date.now() - t0} ms later, while the batch waited for the lock`,
  );
  assert.equal(settled, false, 'not answered before it is committed');
  raw.exec('COMMIT');
  const response = await stored;
  assert.deepEqual(
    response.results.map((r) => r.outcome),
    ['accepted'],
  );
  assert.equal(
    raw.prepare("SELECT count(*) AS n FROM bank_postings WHERE orderno = 'LOCK-1'").pluck().get(),
    1,
  );
});

void test('batches that arrive together are committed together, and one that fails is undone alone', async (t) => {
  const { store, raw } = await storeAndRaw(t);
  // A batch the database refuses part way (its posting's insert aborts), between two good ones.
  raw.exec(`CREATE TRIGGER refuse_bad BEFORE INSERT ON bank_postings WHEN NEW.orderno = 'BAD'
            BEGIN SELECT RAISE(ABORT, 'refused for the test'); END`);
  const results = await Promise.allSettled([
    store.bankPostings.ingestBatch(batchInput([record('GOOD-1')])),
    store.bankPostings.ingestBatch(batchInput([record('BAD')])),
    store.bankPostings.ingestBatch(batchInput([record('GOOD-2')])),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  const orders = raw.prepare('SELECT orderno FROM bank_postings ORDER BY orderno').pluck().all();
  assert.deepEqual(orders, ['GOOD-1', 'GOOD-2']);
  assert.equal(
    raw.prepare('SELECT count(*) FROM webhook_batches').pluck().get(),
    2,
    'the failed batch left no archive row',
  );
});
