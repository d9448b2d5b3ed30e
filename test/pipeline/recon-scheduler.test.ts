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
} from '../../pipeline/recon/scheduler.ts';
import { createBullRuntime } from '../../pipeline/bullmq/runtime.ts';
import { reconNightlyJob } from '../../pipeline/jobs/recon.ts';
import { systemClock } from '../../core/clock.ts';
import type { Deps } from '../../core/deps.ts';
import { createLogger } from '../../core/logger.ts';
import { openPgStore } from '../../core/store/pg/index.ts';
import { onCleanup, startApp } from '../helpers.ts';
import { appDb } from '../support/app-db.ts';
import { waitUntil } from '../support/faults.ts';
import { startPostgres } from '../support/postgres.ts';
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

/** The scheduler's deps over `store`, firing every second (a seconds field: cron-parser's sixth). */
function everySecond(store: Deps['store']): Deps {
  const config = loadConfig({ RECON_CRON: '* * * * * *' });
  return { store, config, clock: systemClock, logger: createLogger('silent') } as unknown as Deps;
}

const nightlyRows = async (store: Deps['store']) =>
  (await store.outbox.pending(10, new Date(Date.now() + 60_000)))
    .filter((r) => r.queue === 'recon-nightly')
    .map((r) => [r.jobId, JSON.parse(r.payload) as unknown]);

test('Redis mode: a new store owes the first firing after the workers start; an established one catches up', async (t) => {
  const app = await startApp(t, { LOG_LEVEL: 'warn' });
  const yesterday = dayOfFiring(new Date());
  const scheduler = createNightlyScheduler(everySecond(app.deps.store), { catchUp: 'established' });
  onCleanup(t, () => scheduler.stop());
  await scheduler.start();
  assert.deepEqual(
    await nightlyRows(app.deps.store),
    [],
    'no firing before the start is owed on a new store',
  );
  await waitUntil(async () => (await nightlyRows(app.deps.store)).length > 0, 5000, 'the first firing');
  assert.deepEqual(await nightlyRows(app.deps.store), [[`recon-nightly.${yesterday}`, { day: yesterday }]]);
  scheduler.stop();

  // An established store (a nightly run recorded): workers that were all down at the firing catch it up.
  await reconNightlyJob.process({ day: yesterday }, app.deps);
  await appDb(t, app).run("DELETE FROM outbox WHERE queue = 'recon-nightly'");
  const restarted = createNightlyScheduler(everySecond(app.deps.store), { catchUp: 'established' });
  onCleanup(t, () => restarted.stop());
  await restarted.start();
  assert.deepEqual(await nightlyRows(app.deps.store), [[`recon-nightly.${yesterday}`, { day: yesterday }]]);
});

test('a firing the store cannot write is owed once it writes again, without a restart (postgresql)', async (t) => {
  const postgres = await startPostgres(t);
  const store = openPgStore(await postgres.createTestDatabase());
  onCleanup(t, () => store.close());
  await store.ping();
  const scheduler = createNightlyScheduler(everySecond(store), { catchUp: 'established' });
  onCleanup(t, () => scheduler.stop());
  await scheduler.start();
  // The server stops taking writes (a failover's demoted primary) across the next firings.
  await postgres.takeWrites(false);
  await new Promise((resolve) => setTimeout(resolve, 2500));
  assert.deepEqual(await nightlyRows(store), [], 'nothing could be written meanwhile');
  await postgres.takeWrites(true);
  await waitUntil(
    async () => (await nightlyRows(store)).length > 0,
    5000,
    'the night owed once writes return',
  );
  const yesterday = dayOfFiring(new Date());
  assert.deepEqual(await nightlyRows(store), [[`recon-nightly.${yesterday}`, { day: yesterday }]]);
});

test('a worker removes the nightly job scheduler that earlier releases kept in Redis', async (t) => {
  const redis = await startRedis(t);
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue('recon-nightly', { connection, prefix: redis.prefix });
  onCleanup(t, async () => {
    await queue.close();
    connection.disconnect();
  });
  // What a worker of an earlier release left: a job scheduler whose firings carry no day.
  await queue.upsertJobScheduler(
    'recon-nightly',
    { pattern: '30 0 * * *', tz: 'Asia/Kuala_Lumpur' },
    { name: 'recon-nightly', data: {} },
  );
  assert.equal((await queue.getJobSchedulers()).length, 1);
  const app = await startApp(t, { LOG_LEVEL: 'warn', REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });
  const runtime = createBullRuntime(app.deps, { pollMs: 20, withWorkers: true, nightlyScheduler: true });
  runtime.start();
  onCleanup(t, () => runtime.stop());
  await waitUntil(async () => (await queue.getJobSchedulers()).length === 0, 10_000, 'the scheduler removed');
  assert.equal(await queue.getDelayedCount(), 0, 'and its next firing with it');
});
