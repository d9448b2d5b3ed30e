/**
 * The outbox forgets the rows of jobs done longer ago than the retention (decision 241), and nothing else: a
 * waiting row, one handed to Redis and not done, and one failed for good all stay however old. A pass looks
 * at a bounded slice, oldest first, so rows that stay at the head never stop the pruning behind them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { onBothEngines, type EngineStore } from '../support/engines.ts';
import { onCleanup, startApp, type TestApp } from '../helpers.ts';
import { startRedis } from '../support/redis.ts';
import { createOutboxPruner } from '../../pipeline/outbox-pruner.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { createBullRuntime } from '../../pipeline/bullmq/runtime.ts';

const NOW = new Date('2026-11-26T02:00:00.000Z');
const DAY = 86_400_000;
const KEEP = 7 * DAY;
const ago = (days: number) => new Date(NOW.getTime() - days * DAY).toISOString();

/** Rows of `queue`, `n` of them from `from`, made `madeDaysAgo` and, unless null, done `doneDaysAgo`. */
async function rows(
  store: EngineStore,
  from: number,
  n: number,
  madeDaysAgo: number,
  state: { doneDaysAgo: number } | 'waiting' | 'unfinished' | 'failed',
): Promise<void> {
  const made = ago(madeDaysAgo);
  const [sent, done, failed] =
    typeof state === 'object'
      ? [`'${ago(state.doneDaysAgo)}'`, `'${ago(state.doneDaysAgo)}'`, 'NULL']
      : state === 'unfinished'
        ? [`'${made}'`, 'NULL', 'NULL']
        : state === 'failed'
          ? ['NULL', 'NULL', `'${made}'`]
          : ['NULL', 'NULL', 'NULL'];
  const values = Array.from(
    { length: n },
    (_, k) => `('normalise', 'job:${from + k}', '{}', '${made}', ${sent}, ${done}, ${failed})`,
  );
  await store.write(
    `INSERT INTO outbox (queue, job_id, payload, created_at, sent_at, done_at, failed_at) VALUES ${values.join(', ')}`,
  );
}

const jobIds = async (store: EngineStore) =>
  (await store.sql<{ job_id: string }>('SELECT job_id FROM outbox ORDER BY id')).map((r) => r.job_id);

onBothEngines('only the rows of jobs done before the retention go', async (_t, store) => {
  await rows(store, 0, 1, 30, { doneDaysAgo: 29 }); // job:0 goes
  await rows(store, 1, 1, 30, 'failed'); // job:1 stays: failed for good, never done
  await rows(store, 2, 1, 20, 'unfinished'); // job:2 stays: handed to Redis, not done
  await rows(store, 3, 1, 20, 'waiting'); // job:3 stays: scheduled, not handed over
  await rows(store, 4, 1, 10, { doneDaysAgo: 8 }); // job:4 goes
  await rows(store, 5, 1, 9, { doneDaysAgo: 6 }); // job:5 stays: done within the retention
  await rows(store, 6, 2, 1, { doneDaysAgo: 1 }); // job:6, job:7 stay
  const pruner = createOutboxPruner(store.outbox, KEEP);
  assert.equal(await pruner.pass(NOW), 2);
  assert.deepEqual(await jobIds(store), ['job:1', 'job:2', 'job:3', 'job:5', 'job:6', 'job:7']);
  assert.equal(await pruner.pass(NOW), 0, 'a second pass finds nothing more');
  // A week on, what was done within the retention goes too; the rest stays.
  assert.equal(await pruner.pass(new Date(NOW.getTime() + KEEP)), 3);
  assert.deepEqual(await jobIds(store), ['job:1', 'job:2', 'job:3']);
});

onBothEngines('rows that stay at the head do not stop the pruning behind them', async (_t, store) => {
  await rows(store, 0, 25, 40, 'failed');
  await rows(store, 25, 30, 30, { doneDaysAgo: 30 });
  await rows(store, 55, 5, 1, 'waiting');
  // Slices of 10 rows: the failed ones fill the first passes' first slices.
  const pruner = createOutboxPruner(store.outbox, KEEP, 10);
  let deleted = 0;
  for (let pass = 0; pass < 3; pass += 1) deleted += await pruner.pass(NOW);
  assert.equal(deleted, 30);
  const left = await jobIds(store);
  assert.equal(left.length, 30);
  assert.ok(
    left.every((id) => Number(id.split(':')[1]) < 25 || Number(id.split(':')[1]) >= 55),
    left.join(),
  );
  // The young rows ended the slices: the next pass starts from the oldest again, and finds nothing.
  assert.equal(await pruner.pass(NOW), 0);
});

onBothEngines(
  'a row is deleted only when done before the cutoff, whatever ids are asked for',
  async (_t, store) => {
    await rows(store, 0, 1, 30, 'failed');
    await rows(store, 1, 1, 3, { doneDaysAgo: 2 });
    const ids = (await store.sql<{ id: number }>('SELECT id FROM outbox ORDER BY id')).map((r) =>
      Number(r.id),
    );
    assert.equal(await store.outbox.deleteDone(ids, new Date(ago(7))), 0);
    assert.equal((await jobIds(store)).length, 2);
  },
);

/** An outbox row of a job done `daysAgo`, as a runtime leaves it. */
async function doneJob(app: TestApp, jobId: string, daysAgo: number, redisMode: boolean): Promise<void> {
  const at = new Date(Date.now() - daysAgo * DAY);
  await app.deps.store.outbox.enqueue('normalise', jobId, { batchId: jobId }, at);
  const [row] = (await app.deps.store.outbox.pending(500, at)).filter((r) => r.jobId === jobId);
  if (redisMode) {
    await app.deps.store.outbox.markSentMany([row!.id], at);
    await app.deps.store.outbox.markDone(jobId, at);
  } else await app.deps.store.outbox.markSent(row!.id, at);
}

const kept = async (app: TestApp) =>
  (await app.deps.store.outbox.oldestAfter(0, 100)).map((r) => r.id).length;

void test('embedded mode: a look at the outbox forgets the rows done before OUTBOX_KEEP_DAYS', async (t) => {
  const app = await startApp(t, { OUTBOX_KEEP_DAYS: '2' });
  await doneJob(app, 'old-job', 3, false);
  await doneJob(app, 'recent-job', 1, false);
  const before = await kept(app);
  await createInProcessRuntime(app.deps, { pollMs: 10 }).drain();
  assert.equal(await kept(app), before - 1);
  const left = (await app.deps.store.outbox.oldestAfter(0, 100)).map((r) => r.createdAt);
  assert.ok(
    left.every((at) => at > new Date(Date.now() - 2 * DAY).toISOString()),
    left.join(),
  );
});

void test('Redis mode: each reconciler pass forgets the rows done before OUTBOX_KEEP_DAYS', async (t) => {
  const redis = await startRedis(t);
  const app = await startApp(t, {
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
    OUTBOX_KEEP_DAYS: '2',
    PIPELINE_RECONCILE_MS: '50',
  });
  await doneJob(app, 'old-job', 3, true);
  await doneJob(app, 'recent-job', 1, true);
  const before = await kept(app);
  const runtime = createBullRuntime(app.deps, { pollMs: 20, withWorkers: true });
  runtime.start();
  onCleanup(t, () => runtime.stop());
  const deadline = Date.now() + 10_000;
  while ((await kept(app)) !== before - 1 && Date.now() < deadline) await sleep(25);
  assert.equal(await kept(app), before - 1, 'the old row gone, the recent one kept');
});
