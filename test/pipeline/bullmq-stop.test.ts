/**
 * A Redis-mode runtime stopped while its BullMQ workers are still connecting (a worker process told to stop
 * right after it started, or a test's cleanup) stops quietly: BullMQ turns a worker closed during its
 * connection's start-up into an unhandled "Connection is closed" rejection, which kills a process run with
 * Node's default --unhandled-rejections=throw.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBullRuntime } from '../../pipeline/bullmq/runtime.ts';
import { startApp } from '../helpers.ts';
import { startRedis } from '../support/redis.ts';

test('a Redis-mode runtime stopped right after it started leaves no unhandled rejection', async (t) => {
  const redis = await startRedis(t);
  const app = await startApp(t, { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', record);
  t.after(() => process.off('unhandledRejection', record));
  // Stopped at once, and a few milliseconds in: the connections' start-up is at a different step each time.
  for (const after of [0, 0, 1, 2, 5, 10]) {
    const runtime = createBullRuntime(app.deps, { pollMs: 20, withWorkers: true });
    runtime.start();
    await new Promise((resolve) => setTimeout(resolve, after));
    await runtime.stop();
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(
    unhandled.map((reason) => String(reason)),
    [],
  );
});
