/**
 * The outbox relay on a real Redis: every job id the code makes is one BullMQ accepts, and a row BullMQ
 * refuses fails alone instead of holding back every row behind it (found by the many-machines test: a
 * callback deferred while its order was busy got an id with four colons, and the whole outbox stopped).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Queue } from 'bullmq';
import {
  NORMALISE_QUEUE,
  RECEIPT_QUEUE,
  ledgerJobId,
  normaliseJobId,
  receiptJobId,
  reconEmailJobId,
  reconNightlyJobId,
  reconRemailJobId,
} from '../../core/queues.ts';
import { createOutboxRelay } from '../../pipeline/bullmq/outbox-relay.ts';
import { onCleanup, startApp } from '../helpers.ts';
import { appDb } from '../support/app-db.ts';
import { startRedis } from '../support/redis.ts';

test('every job id the code makes is accepted by BullMQ on a real Redis', async (t) => {
  const redis = await startRedis(t);
  const queue = new Queue('ids', { connection: { url: redis.url }, prefix: redis.prefix });
  onCleanup(t, () => queue.close());
  const ids = [
    normaliseJobId('bat_0fd68f75c909468baf53dfafbbc2ec52'),
    ledgerJobId('LZS', 'bat_0fd68f75c909468baf53dfafbbc2ec52'),
    ledgerJobId('TEST', 'bat_0fd68f75c909468baf53dfafbbc2ec52'),
    reconNightlyJobId('2026-11-24'),
    reconEmailJobId(3),
    reconRemailJobId(3, 1),
    receiptJobId('AM261125JGW2B8A3M4'),
  ];
  for (const jobId of ids) {
    await assert.doesNotReject(queue.add('x', {}, { jobId }), `BullMQ refuses ${jobId}`);
  }
  assert.equal(await queue.count(), ids.length);
});

test('a row BullMQ refuses is failed on its own, and the rows behind it reach Redis', async (t) => {
  const redis = await startRedis(t);
  const app = await startApp(t, { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });
  const now = app.deps.clock.now();
  // An id BullMQ cannot take (as a callback's busy deferral's once was), between two good rows.
  await app.deps.store.outbox.enqueue(RECEIPT_QUEUE, receiptJobId('AM1'), { orderNo: 'AM1' }, now);
  await app.deps.store.outbox.enqueue(RECEIPT_QUEUE, 'receipt:2:-1:busy:1', { orderNo: 'AM2' }, now);
  await app.deps.store.outbox.enqueue(NORMALISE_QUEUE, normaliseJobId('bat_x'), { batchId: 'bat_x' }, now);
  const relay = createOutboxRelay(app.deps);
  onCleanup(t, () => relay.stop());

  assert.equal(await relay.handOver(), 3, 'all three rows taken off the outbox');
  assert.equal(await relay.handOver(), 0, 'nothing left to hand over: the refused row does not come back');
  const stats = new Map((await app.deps.store.outbox.stats()).map((s) => [s.queue, s]));
  assert.equal(stats.get(RECEIPT_QUEUE)?.failed, 1, 'the refused row is shown failed');
  assert.equal(stats.get(RECEIPT_QUEUE)?.sent, 1);
  assert.equal(stats.get(NORMALISE_QUEUE)?.sent, 1);
  assert.equal(await relay.queues.get(RECEIPT_QUEUE).count(), 1, 'the good receipt is in Redis');
  assert.equal(await relay.queues.get(NORMALISE_QUEUE).count(), 1, 'the row behind it is in Redis');
});

test(
  'a Redis that stops answering mid-hand-over: the hand-over gives up within seconds and lets go of the rows in the store, which flow once Redis answers again',
  { timeout: 60_000 },
  async (t) => {
    const redis = await startRedis(t);
    const app = await startApp(t, { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });
    const db = appDb(t, app);
    const relay = createOutboxRelay(app.deps);
    onCleanup(t, async () => {
      redis.thaw();
      await relay.stop();
    });
    const enqueue = (batchId: string) =>
      app.deps.store.outbox.enqueue(
        NORMALISE_QUEUE,
        normaliseJobId(batchId),
        { batchId },
        app.deps.clock.now(),
      );
    await enqueue('bat_before');
    assert.equal(await relay.handOver(), 1, 'the relay reaches Redis');

    await enqueue('bat_frozen');
    redis.freeze();
    const started = Date.now();
    await assert.rejects(relay.handOver(), /redis did not answer within 5000 ms/);
    const waited = Date.now() - started;
    assert.ok(waited >= 4500 && waited < 10_000, `gave up after ${waited} ms`);
    // Nothing is held meanwhile: the row waits, unlocked (on PostgreSQL no transaction stays open on it).
    const waiting = await db.rows<{ job_id: string }>('SELECT job_id FROM outbox WHERE sent_at IS NULL');
    assert.deepEqual(waiting, [{ job_id: normaliseJobId('bat_frozen') }]);
    if (db.engine === 'postgresql') {
      const open = await db.rows<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
      );
      assert.deepEqual(open, [{ n: 0 }], 'no session left idle in a transaction');
    }

    redis.thaw();
    let handed = 0;
    for (let tries = 0; handed === 0 && tries < 50; tries += 1) {
      handed = await relay.handOver().catch(() => 0);
      if (handed === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(handed, 1, 'the waiting row flows once Redis answers');
    assert.equal(await relay.queues.get(NORMALISE_QUEUE).count(), 2, 'each job once in Redis');
  },
);
