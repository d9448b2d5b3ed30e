/**
 * What the normalise and ledger jobs commit (issue 17): each completes its own outbox row in the transaction
 * of its work, so the work and its completion are both committed or both not, and the runtimes write
 * nothing after them. Runs on the engine of the run (TEST_DATABASE=postgres puts the app on PostgreSQL).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ledgerJobId, normaliseJobId } from '../../core/queues.ts';
import { createBullRuntime } from '../../pipeline/bullmq/runtime.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { ledgerJob } from '../../pipeline/jobs/ledger.ts';
import { normaliseJob } from '../../pipeline/jobs/normalise.ts';
import { TEST_SINK } from '../../core/store/index.ts';
import type { BankWebhookResponse } from '../../schemas/index.ts';
import { bankRecord, onCleanup, startApp, type TestApp } from '../helpers.ts';
import { countRuntimeMarks } from '../support/outbox-marks.ts';
import { appDb, type AppDb } from '../support/app-db.ts';
import { startRedis } from '../support/redis.ts';

const SINKS = ['LZS', 'PPZ', TEST_SINK] as const;

/** Stores a batch of `n` records spread over the three sinks (LZS, PPZ, the bank's live test); its id. */
async function storeBatch(app: TestApp, tag: string, n = 30): Promise<string> {
  const agencies = ['BANKLZS', 'BANKPPZ', 'BANK'] as const;
  const transactions = Array.from({ length: n }, (_, i) =>
    bankRecord({ orderno: `${tag}-${i}`, agency: agencies[i % 3], amount: 10 + i }),
  );
  const response = await app.postBatch({ transactions });
  assert.equal(response.status, 200, await response.clone().text());
  return ((await response.json()) as BankWebhookResponse).batch_id;
}

/** Whether the outbox row of `jobId` is done (sent and completed), as another connection reads it. */
async function isDone(db: AppDb, jobId: string): Promise<boolean> {
  const [row] = await db.rows<{ done: string | null }>(
    'SELECT done_at AS done FROM outbox WHERE job_id = ?',
    [jobId],
  );
  assert.ok(row, `an outbox row ${jobId}`);
  return row.done !== null;
}

/** Each sink's ledger entries of `batchId`'s records, by posting: every posting once per sink. */
async function ledgerCounts(app: TestApp): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const sink of SINKS) {
    const entries = await app.deps.store.ledger.entries(sink);
    const keys = new Set(entries.map((e) => `${e.postingId}.${e.version}`));
    assert.equal(keys.size, entries.length, `no posting twice in ${sink}'s ledger`);
    counts[sink] = entries.length;
  }
  return counts;
}

void test('the normalise and ledger jobs complete their own outbox rows in their writes: the in-process runtime marks nothing after them', async (t) => {
  const app = await startApp(t);
  const db = appDb(t, app);
  const batches = [await storeBatch(app, 'CM1'), await storeBatch(app, 'CM2')];
  const marks = countRuntimeMarks(app);
  await createInProcessRuntime(app.deps, { pollMs: 10, maxAttempts: 3, backoffMs: 0 }).drain();

  assert.deepEqual(await ledgerCounts(app), { LZS: 20, PPZ: 20, [TEST_SINK]: 20 });
  for (const batchId of batches) {
    assert.ok(await isDone(db, normaliseJobId(batchId)));
    for (const sink of SINKS)
      assert.ok(await isDone(db, ledgerJobId(sink, batchId)), `${sink} of ${batchId}`);
  }
  assert.equal(marks.count(), 0, 'no outbox row was marked by the runtime in a write of its own');
});

void test('on BullMQ the normalise and ledger jobs mark their jobs done in their writes: the worker marks nothing after them', async (t) => {
  const redis = await startRedis(t);
  const app = await startApp(t, { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });
  const db = appDb(t, app);
  const batchId = await storeBatch(app, 'CMB');
  const marks = countRuntimeMarks(app);
  const runtime = createBullRuntime(app.deps, { pollMs: 20, withWorkers: true });
  runtime.start();
  onCleanup(t, () => runtime.stop());
  await runtime.drain();

  assert.deepEqual(await ledgerCounts(app), { LZS: 10, PPZ: 10, [TEST_SINK]: 10 });
  assert.ok(await isDone(db, normaliseJobId(batchId)));
  for (const sink of SINKS) assert.ok(await isDone(db, ledgerJobId(sink, batchId)), sink);
  assert.equal(marks.count(), 0, 'no job was marked done by the worker in a write of its own');
});

void test("a sink's ledger append that fails leaves its job's outbox row not done, while the other sinks' appends of the same commit are stored and done", async (t) => {
  const app = await startApp(t);
  const db = appDb(t, app);
  const batchId = await storeBatch(app, 'CMF');
  const restore = await db.failInserts('ledger_entries', 'sink', 'PPZ', 'ledger refused');
  const runtime = createInProcessRuntime(app.deps, { pollMs: 10, maxAttempts: 1, backoffMs: 0 });
  await runtime.drain();

  assert.deepEqual(await ledgerCounts(app), { LZS: 10, PPZ: 0, [TEST_SINK]: 10 });
  assert.equal(
    await isDone(db, ledgerJobId('PPZ', batchId)),
    false,
    'no completion for an append rolled back',
  );
  assert.ok(await isDone(db, ledgerJobId('LZS', batchId)));
  assert.ok(await isDone(db, ledgerJobId(TEST_SINK, batchId)));
  assert.deepEqual(
    (await runtime.failed()).map((f) => f.jobId),
    [ledgerJobId('PPZ', batchId)],
  );

  await restore();
  assert.equal(await runtime.retryFailed(), 1);
  await runtime.drain();
  assert.deepEqual(await ledgerCounts(app), { LZS: 10, PPZ: 10, [TEST_SINK]: 10 });
  assert.ok(await isDone(db, ledgerJobId('PPZ', batchId)));
});

void test('a normalise job whose save fails leaves its outbox row not done and writes no ledger job', async (t) => {
  const app = await startApp(t);
  const db = appDb(t, app);
  const batchId = await storeBatch(app, 'CMN', 3);
  const [first] = await app.deps.store.ledger.batchVersions(batchId);
  assert.ok(first);
  // One of the batch's rows refused: the whole save, its ledger jobs and its completion roll back.
  const restore = await db.failInserts('normalised_postings', 'batch_id', batchId, 'normalised refused');
  const runtime = createInProcessRuntime(app.deps, { pollMs: 10, maxAttempts: 1, backoffMs: 0 });
  await runtime.drain();

  assert.equal(await isDone(db, normaliseJobId(batchId)), false, 'no completion for a save rolled back');
  const ledgerRows = await db.rows<{ n: number }>(
    "SELECT count(*) AS n FROM outbox WHERE job_id LIKE 'ledger%'",
  );
  assert.equal(Number(ledgerRows[0]?.n), 0, 'no ledger job of a save rolled back');
  const normalised = await db.rows<{ n: number }>('SELECT count(*) AS n FROM normalised_postings');
  assert.equal(Number(normalised[0]?.n), 0);

  await restore();
  await runtime.retryFailed();
  await runtime.drain();
  assert.ok(await isDone(db, normaliseJobId(batchId)));
  assert.deepEqual(await ledgerCounts(app), { LZS: 1, PPZ: 1, [TEST_SINK]: 1 });
});

void test('a ledger job stopped after its append was committed but before its row was completed runs again and adds no second entry', async (t) => {
  const app = await startApp(t);
  const db = appDb(t, app);
  const batchId = await storeBatch(app, 'CMK');
  // What workers killed between their work and its completion leave: the normalised rows and the ledger
  // jobs, then LZS's entries, each with its outbox row not done.
  await normaliseJob.process({ batchId }, app.deps);
  await ledgerJob.process({ batchId, sink: 'LZS' }, app.deps);
  assert.equal((await app.deps.store.ledger.entries('LZS')).length, 10);
  assert.equal(await isDone(db, normaliseJobId(batchId)), false);
  assert.equal(await isDone(db, ledgerJobId('LZS', batchId)), false);

  await createInProcessRuntime(app.deps, { pollMs: 10, maxAttempts: 3, backoffMs: 0 }).drain();
  assert.deepEqual(await ledgerCounts(app), { LZS: 10, PPZ: 10, [TEST_SINK]: 10 });
  for (const sink of SINKS) assert.ok(await isDone(db, ledgerJobId(sink, batchId)), sink);
});
