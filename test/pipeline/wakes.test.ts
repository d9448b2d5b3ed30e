/**
 * Work starts when it is committed, not at the next poll of the outbox (decision 220): the process that
 * commits rows wakes its own runtime, and in Redis mode the web process wakes the workers over Redis. The
 * polls here are a minute long, so only a wake can deliver within the seconds the tests allow. Runs on the
 * engine of the run (TEST_DATABASE=postgres: the wake after a PostgreSQL commit).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPoller } from '../../pipeline/poller.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { publishWakes } from '../../pipeline/bullmq/wakes.ts';
import { onCleanup, startApp } from '../helpers.ts';
import { startMerchant } from '../support/merchant.ts';
import { paidOrders } from '../support/orders.ts';
import { startRedis } from '../support/redis.ts';
import { freePort } from '../support/free-port.ts';
import { runCli, startWorkerProcess, stopGracefully } from '../bin/processes.ts';

const LONG_POLL_MS = 60_000;
/** Far below LONG_POLL_MS: a callback that arrives within this was woken. */
const WOKEN_WITHIN_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a poke during a look asks for one more look after it, and looks never overlap', async () => {
  let looks = 0;
  let inLook = 0;
  let most = 0;
  let release: (() => void) | undefined;
  const poller = createPoller(async () => {
    looks += 1;
    inLook += 1;
    most = Math.max(most, inLook);
    await new Promise<void>((resolve) => (release = resolve));
    inLook -= 1;
    return { more: false };
  }, LONG_POLL_MS);
  poller.start();
  await sleep(20);
  assert.equal(looks, 1, 'the first look, at start');
  // Three pokes and a wake while it looks: one more look once it ends, not four looks at once.
  poller.poke();
  poller.poke();
  poller.wake();
  poller.poke();
  await sleep(50);
  assert.equal(looks, 1, 'none while the first runs');
  release?.();
  await sleep(50);
  assert.equal(looks, 2, 'one more after it');
  release?.();
  await sleep(100);
  assert.equal(looks, 2, 'then the long poll');
  assert.equal(most, 1);
  await poller.stop();
});

test('embedded: a paid order’s callback leaves as soon as the payment commits, not at the next poll', async (t) => {
  const app = await startApp(t);
  const merchant = await startMerchant(t);
  const runtime = createInProcessRuntime(app.deps, { pollMs: LONG_POLL_MS });
  runtime.start();
  onCleanup(t, () => runtime.stop());
  await sleep(300); // its first look, at start, found nothing
  const t0 = Date.now();
  await paidOrders(app.deps.store.orders, merchant.url, 1, new Date().toISOString(), 'WAKE');
  await merchant.waitFor(1, WOKEN_WITHIN_MS);
  t.diagnostic(`delivered ${Date.now() - t0} ms after the payment began`);
});

test('Redis mode: a payment in the web process, and an operator redelivering a callback, wake a worker process over Redis', async (t) => {
  const redis = await startRedis(t);
  const app = await startApp(t, { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });
  const merchant = await startMerchant(t);
  const worker = await startWorkerProcess({
    ...app.storeEnv,
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
    PIPELINE_POLL_MS: String(LONG_POLL_MS),
  });
  onCleanup(t, () => worker.child.kill('SIGKILL'));
  await sleep(1000); // its first look at the outbox, at start, found nothing; and it subscribed
  // Without the web process's wake the worker waits for its poll: the control that this test can fail.
  await paidOrders(app.deps.store.orders, merchant.url, 1, new Date().toISOString(), 'QUIET');
  await sleep(1500);
  assert.equal(merchant.received.length, 0, 'no wake, no delivery before the poll');
  // What bin/server.ts does in Redis mode.
  const wakes = publishWakes(app.deps);
  onCleanup(t, () => wakes.close());
  await sleep(200); // its connection is up
  const t0 = Date.now();
  const [woken] = await paidOrders(app.deps.store.orders, merchant.url, 1, new Date().toISOString(), 'WAKE');
  await merchant.waitFor(2, WOKEN_WITHIN_MS);
  t.diagnostic(`both delivered ${Date.now() - t0} ms after the second payment began`);

  // An operator's `amil callbacks redeliver` is another process: it wakes the workers itself.
  const redelivered = await runCli(['callbacks', 'redeliver', woken!], {
    ...app.storeEnv,
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
  });
  assert.equal(redelivered.code, 0, redelivered.stderr);
  const t1 = Date.now();
  await merchant.waitFor(3, WOKEN_WITHIN_MS);
  t.diagnostic(`redelivered ${Date.now() - t1} ms after amil exited`);
  await stopGracefully(worker);
});

test('amil callbacks redeliver with Redis unreachable still queues the callback and exits 0 at once', async (t) => {
  const app = await startApp(t);
  const merchant = await startMerchant(t);
  const [orderNo] = await paidOrders(
    app.deps.store.orders,
    merchant.url,
    1,
    new Date().toISOString(),
    'DOWN',
  );
  // A port nothing listens on: the wake cannot be published, and is a hint the workers' polls make up for.
  const redisUrl = `redis://127.0.0.1:${await freePort()}`;
  const t0 = Date.now();
  const redelivered = await runCli(['callbacks', 'redeliver', orderNo!], {
    ...app.storeEnv,
    REDIS_URL: redisUrl,
  });
  const took = Date.now() - t0;
  assert.equal(redelivered.code, 0, redelivered.stderr);
  assert.match(redelivered.stdout, /^Callback \d+ of DOWN0 queued/);
  assert.equal((await app.deps.store.callbacks.ofOrder(orderNo!)).length, 2, 'the new callback is stored');
  t.diagnostic(`amil took ${took} ms`);
  assert.ok(took < 15_000, `amil waited ${took} ms on a Redis that is not there`);
});
