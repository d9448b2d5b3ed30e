import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { fixedClock } from '../../core/clock.ts';
import { loadConfig } from '../../core/config.ts';
import {
  createNightlyScheduler,
  dayOfFiring,
  lastFireAt,
  nextFireAt,
  upsertNightlyScheduler,
} from '../../pipeline/recon/scheduler.ts';
import { startApp } from '../helpers.ts';
import { startRedis } from '../support/redis.ts';

test('the nightly run fires at 00:30 in Kuala Lumpur and reconciles the day before', () => {
  const at = nextFireAt('30 0 * * *', new Date('2026-11-20T10:00:00+08:00'));
  assert.equal(at.toISOString(), new Date('2026-11-21T00:30:00+08:00').toISOString());
  assert.equal(dayOfFiring(at), '2026-11-20');
  // 23:59 UTC on the 20th is 07:59 on the 21st in KL: the last firing was 00:30 KL that morning.
  assert.equal(
    lastFireAt('30 0 * * *', new Date('2026-11-20T23:59:00Z')).toISOString(),
    '2026-11-20T16:30:00.000Z',
  );
});

test('embedded mode puts the last firing in the outbox at start, once per day', async (t) => {
  const clock = fixedClock('2026-11-21T09:00:00+08:00');
  const app = await startApp(t, { LOG_LEVEL: 'warn' }, { clock });
  for (let start = 0; start < 2; start += 1) {
    const scheduler = createNightlyScheduler(app.deps);
    await scheduler.start();
    scheduler.stop();
  }
  const rows = (await app.deps.store.outbox.pending(10, clock.now())).filter(
    (r) => r.queue === 'recon-nightly',
  );
  assert.deepEqual(
    rows.map((r) => [r.jobId, JSON.parse(r.payload) as unknown]),
    [['recon-nightly.2026-11-20', { day: '2026-11-20' }]],
  );
});

test('Redis mode: one BullMQ job scheduler with the cron and its explicit timezone', async (t) => {
  const redis = await startRedis(t);
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue('recon-nightly', { connection, prefix: redis.prefix });
  t.after(async () => {
    await queue.close();
    connection.disconnect();
  });
  const config = loadConfig({});
  await upsertNightlyScheduler(queue, config);
  await upsertNightlyScheduler(queue, config); // every worker upserts: still one
  const schedulers = await queue.getJobSchedulers();
  assert.equal(schedulers.length, 1);
  assert.equal(await queue.getDelayedCount(), 1, 'one next firing, however often it is re-asserted');
  assert.equal(schedulers[0]?.pattern, '30 0 * * *');
  assert.equal(schedulers[0]?.tz, 'Asia/Kuala_Lumpur');
  const next = new Date(Number(schedulers[0]?.next));
  assert.equal(next.toISOString().slice(11, 19), '16:30:00', '00:30 in Kuala Lumpur is 16:30 UTC');
});
