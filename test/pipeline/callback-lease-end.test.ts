/**
 * One delivery attempt and its lease (decision 264). A process leases callbacks up to one delivery ahead; a
 * lease that waited so long that it could end during the attempt is not used (another process may lease the
 * callback then, and two attempts at once could reach the merchant out of order), and a callback whose
 * stored fields cannot be read is given up at once with the reason, never retried for ever. Runs on the
 * engine of the run (TEST_DATABASE=postgres puts the app on PostgreSQL).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deliverCallback } from '../../pipeline/callbacks/deliver.ts';
import { startApp } from '../helpers.ts';
import { appDb } from '../support/app-db.ts';
import { startMerchant } from '../support/merchant.ts';
import { paidOrders } from '../support/orders.ts';

const iso = (ms: number) => new Date(ms).toISOString();

test('a lease with too little time left for an attempt is not used, and the callback is sent on a fresh lease', async (t) => {
  const app = await startApp(t);
  const merchant = await startMerchant(t, () => 200);
  const at = new Date().toISOString();
  const [orderNo] = await paidOrders(app.deps.store.orders, `${merchant.url}/callback`, 1, at);
  const now = Date.now();
  // Less than CALLBACK_TIMEOUT_MS (10 s) and its 5 s margin left of the lease.
  const [short] = await app.deps.store.callbacks.leaseDue(5, iso(now), iso(now + 8000));
  assert.equal(await deliverCallback(app.deps, short!), 'lease ran out');
  const [held] = await app.deps.store.callbacks.ofOrder(orderNo!);
  assert.deepEqual([held?.state, held?.attempts], ['queued', 0], 'no attempt made');
  assert.equal(merchant.received.length, 0, 'nothing sent');

  // Once that lease has ended, a lease with time enough sends it.
  const [fresh] = await app.deps.store.callbacks.leaseDue(5, iso(now + 8000), iso(now + 60_000));
  assert.equal(await deliverCallback(app.deps, fresh!), 'attempted');
  await merchant.waitFor(1, 5000);
  const [delivered] = await app.deps.store.callbacks.ofOrder(orderNo!);
  assert.deepEqual([delivered?.state, delivered?.attempts], ['delivered', 1]);
});

test('a callback whose stored fields cannot be read is given up at once, with the reason as its attempt', async (t) => {
  const app = await startApp(t);
  const merchant = await startMerchant(t, () => 200);
  const at = new Date().toISOString();
  const [orderNo] = await paidOrders(app.deps.store.orders, `${merchant.url}/callback`, 1, at);
  const db = appDb(t, app);
  await db.run(`UPDATE callbacks SET fields = '{not json' WHERE order_no = '${orderNo}'`);
  const now = Date.now();
  const [lease] = await app.deps.store.callbacks.leaseDue(5, iso(now), iso(now + 60_000));
  assert.equal(await deliverCallback(app.deps, lease!), 'attempted');
  const [callback] = await app.deps.store.callbacks.ofOrder(orderNo!);
  assert.equal(callback?.state, 'dead');
  // The reason without the stored text (a parser's message quotes it: the payer's fields).
  assert.equal(callback.attemptLog[0]?.error, 'the callback cannot be built: SyntaxError');
  assert.equal(merchant.received.length, 0);
  assert.deepEqual(await app.deps.store.callbacks.leaseDue(5, iso(now + 120_000), iso(now + 180_000)), []);
});
