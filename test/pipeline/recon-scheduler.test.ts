import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { fixedClock, type Clock } from '../../core/clock.ts';
import { loadConfig } from '../../core/config.ts';
import {
  createNightlyScheduler,
  dayOfFiring,
  lastFireAt,
  nextFireAt,
} from '../../pipeline/recon/scheduler.ts';
import { createBullRuntime } from '../../pipeline/bullmq/runtime.ts';
import { reconNightlyJob } from '../../pipeline/jobs/recon.ts';
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
    await scheduler.stop();
  }
  const rows = (await app.deps.store.outbox.pending(10, clock.now())).filter(
    (r) => r.queue === 'recon-nightly',
  );
  assert.deepEqual(
    rows.map((r) => [r.jobId, JSON.parse(r.payload) as unknown]),
    [['recon-nightly.2026-11-20', { day: '2026-11-20' }]],
  );
});

/** The scheduler's deps over `store` and `clock`, firing every second (a seconds field: cron-parser's sixth). */
function everySecond(store: Deps['store'], clock: Clock): Deps {
  const config = loadConfig({ RECON_CRON: '* * * * * *' });
  return { store, config, clock, logger: createLogger('silent') } as unknown as Deps;
}

const nightlyRows = async (store: Deps['store']) =>
  (await store.outbox.pending(10, new Date('2026-11-22T00:00:00Z')))
    .filter((r) => r.queue === 'recon-nightly')
    .map((r) => [r.jobId, JSON.parse(r.payload) as unknown]);

// Half past a second: the last firing is before the start, the next half a second after. The clock moves
// only when the test moves it, so which firing a tick owes is the test's to say.
const STARTED = '2026-11-21T09:00:00.500+08:00';
const FIRED = { day: '2026-11-20', row: ['recon-nightly.2026-11-20', { day: '2026-11-20' }] };

test('Redis mode: a new store owes the first firing after the workers start; an established one catches up', async (t) => {
  const clock = fixedClock(STARTED);
  const app = await startApp(t, { LOG_LEVEL: 'warn' }, { clock });
  const scheduler = createNightlyScheduler(everySecond(app.deps.store, clock), { catchUp: 'established' });
  onCleanup(t, () => scheduler.stop());
  await scheduler.start();
  assert.deepEqual(
    await nightlyRows(app.deps.store),
    [],
    'no firing before the start is owed on a new store',
  );
  clock.set(new Date(clock.now().getTime() + 2000)); // a firing passes
  await waitUntil(async () => (await nightlyRows(app.deps.store)).length > 0, 5000, 'the firing owed');
  assert.deepEqual(await nightlyRows(app.deps.store), [FIRED.row]);
  await scheduler.stop();

  // An established store (a nightly run recorded): workers that were all down at the firing catch it up.
  await reconNightlyJob.process({ day: FIRED.day }, app.deps);
  await appDb(t, app).run("DELETE FROM outbox WHERE queue = 'recon-nightly'");
  clock.set(new Date(clock.now().getTime() + 500)); // started again after the firing
  const restarted = createNightlyScheduler(everySecond(app.deps.store, clock), { catchUp: 'established' });
  onCleanup(t, () => restarted.stop());
  await restarted.start();
  assert.deepEqual(await nightlyRows(app.deps.store), [FIRED.row]);
});

test('a firing the store cannot write is owed once it writes again, without a restart (postgresql)', async (t) => {
  const postgres = await startPostgres(t);
  const store = openPgStore(await postgres.createTestDatabase());
  onCleanup(t, () => store.close());
  await store.ping();
  const clock = fixedClock(STARTED);
  const scheduler = createNightlyScheduler(everySecond(store, clock), { catchUp: 'established' });
  onCleanup(t, () => scheduler.stop());
  await scheduler.start();
  // The server stops taking writes (a failover's demoted primary), and a firing passes meanwhile; the clock
  // then stands still, so no later firing can stand in for the one that could not be written.
  await postgres.takeWrites(false);
  clock.set(new Date(clock.now().getTime() + 2000));
  await new Promise((resolve) => setTimeout(resolve, 3500));
  assert.deepEqual(await nightlyRows(store), [], 'nothing could be written meanwhile');
  await postgres.takeWrites(true);
  await waitUntil(
    async () => (await nightlyRows(store)).length > 0,
    5000,
    'the night owed once writes return',
  );
  assert.deepEqual(await nightlyRows(store), [FIRED.row]);
});

test('a worker removes the nightly job scheduler that earlier releases kept in Redis, and again after one re-creates it', async (t) => {
  const redis = await startRedis(t);
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue('recon-nightly', { connection, prefix: redis.prefix });
  onCleanup(t, async () => {
    await queue.close();
    connection.disconnect();
  });
  // What a worker of an earlier release upserts at each of its passes: a job scheduler whose firings carry no day.
  const legacy = () =>
    queue.upsertJobScheduler(
      'recon-nightly',
      { pattern: '30 0 * * *', tz: 'Asia/Kuala_Lumpur' },
      { name: 'recon-nightly', data: {} },
    );
  await legacy();
  assert.equal((await queue.getJobSchedulers()).length, 1);
  const app = await startApp(t, {
    LOG_LEVEL: 'warn',
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
    PIPELINE_RECONCILE_MS: '200',
  });
  const runtime = createBullRuntime(app.deps, { pollMs: 20, withWorkers: true, nightlyScheduler: true });
  runtime.start();
  onCleanup(t, () => runtime.stop());
  await waitUntil(async () => (await queue.getJobSchedulers()).length === 0, 10_000, 'the scheduler removed');
  assert.equal(await queue.getDelayedCount(), 0, 'and its next firing with it');
  // A worker of the release before, still running during a rolling upgrade, re-creates it at its pass.
  await legacy();
  assert.equal((await queue.getJobSchedulers()).length, 1);
  await waitUntil(async () => (await queue.getJobSchedulers()).length === 0, 10_000, 'removed again');
});
