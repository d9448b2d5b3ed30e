/**
 * Redis mode delivers callbacks straight from their own rows (decisions 218, 264): every worker leases them,
 * with no BullMQ job or outbox row per callback. So callbacks flow while Redis does not answer, two workers never deliver one callback
 * twice, and the callbacks a dead worker held are delivered once its lease ends. Runs on the engine of the
 * run (TEST_DATABASE=postgres puts the app on PostgreSQL).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { CALLBACK_ID_HEADER } from '../../core/payments/callback-fields.ts';
import { CALLBACK_QUEUE } from '../../core/queues.ts';
import { createBullRuntime } from '../../pipeline/bullmq/runtime.ts';
import { onCleanup, startApp, type TestApp } from '../helpers.ts';
import { startMerchant, type Merchant } from '../support/merchant.ts';
import { paidOrders } from '../support/orders.ts';
import { startRedis, type TestRedis } from '../support/redis.ts';
import { startWorkerProcess } from '../bin/processes.ts';

async function redisApp(t: TestContext): Promise<{ app: TestApp; redis: TestRedis; merchant: Merchant }> {
  const redis = await startRedis(t);
  const app = await startApp(t, { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });
  const merchant = await startMerchant(t, () => 200);
  return { app, redis, merchant };
}

/** A worker's runtime, started now and stopped after the test. */
function startWorkerRuntime(t: TestContext, app: TestApp) {
  const runtime = createBullRuntime(app.deps, { pollMs: 20, withWorkers: true });
  runtime.start();
  onCleanup(t, () => runtime.stop());
  return runtime;
}

/**
 * Each order's callback delivered, once: one attempt, and one request to the merchant per callback id.
 * Waits (up to `ms`) for the last finishes to commit: the merchant has its request before the store does.
 */
async function assertEachDeliveredOnce(
  app: TestApp,
  merchant: Merchant,
  orderNos: string[],
  ms = 10_000,
): Promise<void> {
  await merchant.waitFor(orderNos.length, ms);
  const until = Date.now() + ms;
  const delivered = async () => {
    for (const orderNo of orderNos)
      if ((await app.deps.store.callbacks.ofOrder(orderNo))[0]?.state !== 'delivered') return false;
    return true;
  };
  while (!(await delivered()) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  const ids = merchant.received.map((r) => r.headers[CALLBACK_ID_HEADER.toLowerCase()]);
  assert.equal(new Set(ids).size, ids.length, 'no callback delivered twice');
  assert.equal(ids.length, orderNos.length);
  for (const orderNo of orderNos) {
    const [callback, ...more] = await app.deps.store.callbacks.ofOrder(orderNo);
    assert.equal(more.length, 0);
    assert.equal(callback?.state, 'delivered', orderNo);
    assert.equal(callback.attemptLog.length, 1, orderNo);
  }
}

void test('a worker process delivers callbacks while Redis does not answer', async (t) => {
  const { app, redis, merchant } = await redisApp(t);
  const worker = await startWorkerProcess({
    ...app.storeEnv,
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
  });
  onCleanup(t, () => worker.child.kill('SIGKILL'));
  // Frozen, not stopped: connections stay open and nothing answers, as a Redis stuck on its disk.
  redis.freeze();
  onCleanup(t, () => redis.thaw());
  // Paid while Redis is frozen: before decision 218 these waited for it, handed over or in its queue.
  const orderNos = await paidOrders(app.deps.store.orders, `${merchant.url}/callback`, 8);
  await assertEachDeliveredOnce(app, merchant, orderNos, 20_000);
});

void test('two workers share the callbacks: each is delivered once, and the outbox is left with nothing', async (t) => {
  const { app, merchant } = await redisApp(t);
  const orderNos = await paidOrders(app.deps.store.orders, `${merchant.url}/callback`, 150);
  const workers = [startWorkerRuntime(t, app), startWorkerRuntime(t, app)];
  await assertEachDeliveredOnce(app, merchant, orderNos, 20_000);
  await Promise.all(workers.map((w) => w.drain()));
  assert.deepEqual(await app.deps.store.outbox.pending(1000, new Date()), []);
  const callbacks = (await workers[0]!.counts()).find((c) => c.queue === CALLBACK_QUEUE);
  assert.deepEqual(
    { waiting: callbacks?.waiting, failed: callbacks?.failed },
    { waiting: 0, failed: 0 },
    'the queue board counts the callbacks from their rows',
  );
});

void test('the callbacks a dead worker held are delivered by another once its lease ends', async (t) => {
  const { app, merchant } = await redisApp(t);
  const orderNos = await paidOrders(app.deps.store.orders, `${merchant.url}/callback`, 10);
  // A worker leases them for 1.5 s and dies without delivering any.
  const leasedAt = new Date();
  const held = await app.deps.store.callbacks.leaseDue(
    100,
    leasedAt.toISOString(),
    new Date(leasedAt.getTime() + 1500).toISOString(),
  );
  assert.equal(held.length, 10);
  startWorkerRuntime(t, app);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(merchant.received.length, 0, 'not taken while the dead worker’s lease holds');
  await assertEachDeliveredOnce(app, merchant, orderNos);
  assert.ok(merchant.received[0]!.at >= leasedAt.getTime() + 1500, 'taken once the lease ended');
});

void test('a drain does not wait for a callback retry scheduled for later', async (t) => {
  const redis = await startRedis(t);
  const app = await startApp(t, { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });
  const merchant = await startMerchant(t, () => 500);
  // Paid now: a callback made days ago would be past its retry horizon, dead at its first refusal.
  const at = new Date().toISOString();
  const [orderNo] = await paidOrders(app.deps.store.orders, `${merchant.url}/callback`, 1, at);
  const runtime = startWorkerRuntime(t, app);
  let timer: NodeJS.Timeout | undefined;
  const tooLong = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve('still draining after 5 s'), 5000);
  });
  const drained = await Promise.race([runtime.drain().then(() => 'drained'), tooLong]);
  clearTimeout(timer);
  assert.equal(drained, 'drained');
  const [callback] = await app.deps.store.callbacks.ofOrder(orderNo ?? '');
  assert.equal(callback?.state, 'queued', 'refused once, its retry scheduled (CALLBACK_RETRY_MS, 30 s)');
  assert.equal(callback.attemptLog.length, 1);
});
