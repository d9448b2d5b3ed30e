import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { createCallbackClient } from '../../core/outbound/callback-client.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { sweepPendingPayments } from '../../pipeline/enquiry.ts';
import { onCleanup, problemOf, reportToken, startApp, type TestApp } from '../helpers.ts';
import { capturedLogger } from '../support/logs.ts';
import {
  LZS_KEY,
  MERCHANT_REPLY,
  postOrder,
  startMerchant,
  type Merchant,
  type ReceivedCallback,
} from '../support/merchant.ts';
import { verifyCallback } from '../../core/signatures.ts';

// Retries every ~30 ms so the schedule runs in a test's time; the shape is the production one.
const FAST = { CALLBACK_RETRY_MS: '30', CALLBACK_TIMEOUT_MS: '2000' };

interface Created {
  orderNo: string;
  checkoutUrl: string;
}

async function order(app: TestApp, merchant: Merchant | { url: string }): Promise<Created> {
  const res = await postOrder(app, {
    agency: 'LZS',
    refNo: `INV-${Math.random().toString(36).slice(2, 10)}`,
    amount: '25.00',
    email: 'ali@example.my',
    returnUrl: `${merchant.url}/callback`,
  });
  assert.equal(res.status, 201);
  return (await res.json()) as Created;
}

/** Pays at a bank; returns the sandbox reference of the attempt. */
async function pay(app: TestApp, created: Created, bank: string, follow = true): Promise<string> {
  const t = new URL(created.checkoutUrl, app.url).searchParams.get('t') ?? '';
  const res = await fetch(`${app.url}/v2/checkout/${created.orderNo}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ t, method: 'fpx', bank }).toString(),
    redirect: 'manual',
  });
  assert.equal(res.status, 303);
  // The payer's browser follows: to the sandbox bank page, or (fixed-outcome banks) back to the return page.
  if (follow) {
    await (
      await fetch(new URL(res.headers.get('location') ?? '', app.url), { headers: { accept: 'text/html' } })
    ).text();
  }
  const stored = await app.deps.store.orders.order(created.orderNo);
  return stored?.acquirerRef ?? '';
}

/** The tester's pick on the sandbox page, then the payer's return (which asks the acquirer). */
async function decide(app: TestApp, ref: string, outcome: string): Promise<void> {
  const res = await fetch(`${app.url}/sandbox/${ref}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `outcome=${outcome}`,
    redirect: 'manual',
  });
  assert.equal(res.status, 303);
  const back = await fetch(new URL(res.headers.get('location') ?? '', app.url), {
    headers: { accept: 'text/html' },
  });
  assert.equal(back.status, 200);
}

function runRelay(t: Parameters<typeof startApp>[0], app: TestApp): void {
  const relay = createInProcessRuntime(app.deps, { pollMs: 10, maxAttempts: 8, backoffMs: 10 });
  relay.start();
  onCleanup(t, () => relay.stop());
}

async function until(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const stateOf = async (app: TestApp, orderNo: string) =>
  (await app.deps.store.callbacks.ofOrder(orderNo)).map((c) => [c.status, c.state]);

test('a receiver answering 500 three times, then 200: one acknowledged delivery, every attempt logged and reported', async (t) => {
  const app = await startApp(t, FAST);
  const merchant = await startMerchant(t, (_form, nth) => (nth < 3 ? 500 : 200));
  runRelay(t, app);
  const created = await order(app, merchant);
  await pay(app, created, 'SBX00');
  await merchant.waitFor(4);
  await until(async () => (await stateOf(app, created.orderNo)).some(([, state]) => state === 'delivered'));
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal(merchant.received.length, 4, 'no delivery after the acknowledgement');
  assert.deepEqual(
    merchant.received.map((r) => r.answeredWith),
    [500, 500, 500, 200],
  );
  const [callback] = await app.deps.store.callbacks.ofOrder(created.orderNo);
  assert.equal(callback?.state, 'delivered');
  assert.deepEqual(
    callback?.attemptLog.map((a) => a.statusCode),
    [500, 500, 500, 200],
  );
  assert.equal(callback?.attemptLog[0]?.responsePrefix, 'try again');

  const token = await reportToken(app, ['LZS'], new Date());
  const report = await fetch(`${app.url}/api/report/v1/fpxrequest?fpx_seller_order_no=${created.orderNo}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(report.status, 200);
  const body = (await report.json()) as { data: { callbacks: { attempts: { status_code: number }[] }[] } };
  assert.deepEqual(
    body.data.callbacks[0]?.attempts.map((a) => a.status_code),
    [500, 500, 500, 200],
  );
});

test('pending, then success: the merchant hears pending, then success, never a stale pending afterwards', async (t) => {
  const app = await startApp(t, FAST);
  // The pending callback is refused for a while; success is taken at once.
  const merchant = await startMerchant(t, (form) => (form.get('status') === 'pending' ? 500 : 200));
  runRelay(t, app);
  const created = await order(app, merchant);
  const ref = await pay(app, created, 'TEST0021');
  await decide(app, ref, '09');
  await merchant.waitFor(2);
  assert.ok(merchant.received.every((r) => r.form.get('status') === 'pending'));

  await decide(app, ref, '00');
  await until(() => Promise.resolve(merchant.received.some((r) => r.form.get('status') === 'success')));
  await new Promise((resolve) => setTimeout(resolve, 200));
  const statuses = merchant.received.map((r) => r.form.get('status'));
  const firstSuccess = statuses.indexOf('success');
  assert.deepEqual(
    statuses.slice(firstSuccess),
    ['success'],
    `no pending after success: ${statuses.join(',')}`,
  );
  assert.deepEqual(await stateOf(app, created.orderNo), [
    ['pending', 'superseded'],
    ['success', 'delivered'],
  ]);
});

test('a pending payment the payer never returns from is resolved by the status enquiry, or expires', async (t) => {
  const app = await startApp(t, { ...FAST, PENDING_EXPIRY_MS: '60000' });
  const merchant = await startMerchant(t);
  const relay = createInProcessRuntime(app.deps);
  const created = await order(app, merchant);
  const ref = await pay(app, created, 'SBX09', false);
  assert.equal(await sweepPendingPayments(app.deps), 1, 'the first pending answer is news');
  assert.equal(await sweepPendingPayments(app.deps), 0, 'asking again changes nothing');
  assert.ok(await app.deps.store.sandbox.decide(ref, '51', ['09'], new Date().toISOString()));
  assert.equal(await sweepPendingPayments(app.deps), 1);
  await relay.drain();
  // The pending callback was not delivered before the payment failed: only the news that counts goes out.
  assert.deepEqual(
    merchant.received.map((r) => [
      r.form.get('status'),
      (JSON.parse(r.form.get('fpx') ?? '{}') as { fpx_debit_auth_code?: string }).fpx_debit_auth_code,
    ]),
    [['failed', '51']],
  );
  assert.deepEqual(await stateOf(app, created.orderNo), [
    ['pending', 'superseded'],
    ['failed', 'delivered'],
  ]);

  const stale = await order(app, merchant);
  await pay(app, stale, 'SBX09', false);
  await app.deps.store.orders.settle(
    stale.orderNo,
    { status: 'pending', code: '09', txnId: null, txnTime: null, source: 'test' },
    new Date().toISOString(),
    () => undefined,
  );
  // Five seconds later, with a one-second expiry: the payment the bank still calls pending becomes failed.
  const later = {
    ...app.deps,
    config: { ...app.deps.config, checkout: { ...app.deps.config.checkout, pendingExpiryMs: 1000 } },
    clock: { now: () => new Date(Date.now() + 5000) },
  };
  assert.equal(await sweepPendingPayments(later), 1);
  const expired = await app.deps.store.orders.order(stale.orderNo);
  assert.deepEqual([expired?.status, expired?.debitAuthCode], ['failed', 'XP']);
});

test('an unpaid order the payer takes to the bank while the sweep is expiring it is paid, not failed', async (t) => {
  const app = await startApp(t, FAST);
  const merchant = await startMerchant(t);
  runRelay(t, app);
  const created = await order(app, merchant);
  let ref = '';
  // The sweep, an hour later, reads the order as never taken to the bank; before it settles the order,
  // the payer (on this or another web process) clicks Pay.
  const orders = app.deps.store.orders;
  const logs = capturedLogger('info');
  const racing = {
    ...app.deps,
    logger: logs.logger,
    clock: { now: () => new Date(Date.now() + 61 * 60_000) },
    store: {
      ...app.deps.store,
      orders: {
        ...orders,
        unpaidBefore: async (before: string, limit: number) => {
          const unpaid = await orders.unpaidBefore(before, limit);
          if (unpaid.some((o) => o.orderNo === created.orderNo))
            ref = await pay(app, created, 'TEST0021', false);
          return unpaid;
        },
      },
    },
  };
  assert.equal(await sweepPendingPayments(racing), 0, 'nothing expired');
  assert.ok(ref, 'the payer went to the bank while the sweep ran');
  // Ops can tell the sweep's decision was set aside, and why.
  assert.ok(
    logs.lines.some((line) => line.includes('before the payer started another attempt')),
    logs.lines.join('\n'),
  );
  await decide(app, ref, '00');
  await until(() => Promise.resolve(merchant.received.length > 0));
  const paid = await app.deps.store.orders.order(created.orderNo);
  assert.deepEqual([paid?.status, paid?.debitAuthCode], ['success', '00']);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(
    merchant.received.map((r) => r.form.get('status')),
    ['success'],
  );
});

test('410 stops delivery; a callback never acknowledged is given up (dead) past the horizon', async (t) => {
  const app = await startApp(t, { ...FAST, CALLBACK_GIVE_UP_MS: '200' });
  const gone = await startMerchant(t, () => 410);
  const down = await startMerchant(t, () => 503);
  runRelay(t, app);
  const a = await order(app, gone);
  const b = await order(app, down);
  await pay(app, a, 'SBX00');
  await pay(app, b, 'SBX00');
  await until(async () => (await stateOf(app, b.orderNo))[0]?.[1] === 'dead');
  assert.deepEqual(await stateOf(app, a.orderNo), [['success', 'gone']]);
  assert.equal(gone.received.length, 1);
  assert.ok(down.received.length >= 2, `retried before giving up (${down.received.length})`);
  const failed = await app.deps.store.callbacks.list({ failed: true, limit: 10 });
  assert.deepEqual(failed.map((c) => c.state).sort(), ['dead', 'gone']);
});

test('SSRF: metadata and private returnUrls are refused at checkout; a name rebinding to a private address is refused at connect time', async (t) => {
  const answers: string[] = ['10.0.0.1'];
  const app = await startApp(t, FAST, {
    callbacks: createCallbackClient({
      timeoutMs: 1000,
      allowedAddresses: ['127.0.0.1'],
      lookup: (_host, _options, callback) =>
        callback(null, [{ address: answers.shift() ?? '10.0.0.1', family: 4 } satisfies LookupAddress]),
    }),
  });
  await app.deps.store.agencies.update('LZS', {
    settings: { callbackHosts: ['127.0.0.1', '169.254.169.254', '10.0.0.1', 'rebind.test'] },
  });
  for (const url of ['http://169.254.169.254/latest/meta-data', 'http://10.0.0.1/callback']) {
    const res = await postOrder(app, {
      agency: 'LZS',
      refNo: `SSRF-${url.length}`,
      amount: '10.00',
      email: 'ali@example.my',
      returnUrl: url,
    });
    assert.equal(res.status, 422, url);
    assert.match((await problemOf(res)).errors?.[0]?.message ?? '', /private, loopback or link-local/);
  }
  runRelay(t, app);
  const created = await order(app, { url: 'http://rebind.test:8080' });
  await pay(app, created, 'SBX00');
  await until(
    async () => ((await app.deps.store.callbacks.ofOrder(created.orderNo))[0]?.attemptLog.length ?? 0) > 0,
  );
  const [callback] = await app.deps.store.callbacks.ofOrder(created.orderNo);
  assert.equal(callback?.attemptLog[0]?.statusCode, null);
  assert.match(callback?.attemptLog[0]?.error ?? '', /forbidden address 10\.0\.0\.1/);
});

test('a callback to a refused address is dead after its first attempt, the reason in that attempt', async (t) => {
  const app = await startApp(t, FAST, {
    callbacks: createCallbackClient({
      timeoutMs: 1000,
      allowedAddresses: ['127.0.0.1'],
      // NAT64 form of the cloud metadata address 169.254.169.254.
      lookup: (_host, _options, callback) =>
        callback(null, [{ address: '64:ff9b::a9fe:a9fe', family: 6 } satisfies LookupAddress]),
    }),
  });
  await app.deps.store.agencies.update('LZS', {
    settings: { callbackHosts: ['127.0.0.1', 'nat64.test'] },
  });
  runRelay(t, app);
  const created = await order(app, { url: 'http://nat64.test:8080' });
  await pay(app, created, 'SBX00');
  await until(async () => (await stateOf(app, created.orderNo))[0]?.[1] === 'dead');
  // Past the fast phase's ~30 ms retries, a retried callback would show more attempts by now.
  await new Promise((resolve) => setTimeout(resolve, 150));
  const [callback] = await app.deps.store.callbacks.ofOrder(created.orderNo);
  assert.equal(callback?.state, 'dead');
  assert.equal(callback?.attemptLog.length, 1);
  assert.match(callback?.attemptLog[0]?.error ?? '', /forbidden address 64:ff9b::a9fe:a9fe/);
});

test("a merchant's 2xx answer body is not kept; the excerpt of a non-2xx answer is", async (t) => {
  const app = await startApp(t, FAST);
  const merchant = await startMerchant(t, (_form, nth) => (nth < 1 ? 500 : 200));
  runRelay(t, app);
  const created = await order(app, merchant);
  await pay(app, created, 'SBX00');
  await until(async () => (await stateOf(app, created.orderNo)).some(([, state]) => state === 'delivered'));
  const [callback] = await app.deps.store.callbacks.ofOrder(created.orderNo);
  assert.deepEqual(
    callback?.attemptLog.map((a) => [a.statusCode, a.responsePrefix]),
    [
      [500, 'try again'],
      [200, ''],
    ],
  );
  const token = await reportToken(app, ['LZS'], new Date());
  const report = await fetch(`${app.url}/api/report/v1/fpxrequest?fpx_seller_order_no=${created.orderNo}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const text = await report.text();
  assert.equal(report.status, 200);
  assert.ok(text.includes('try again'), 'the 500 excerpt is reported');
  assert.ok(!text.includes(MERCHANT_REPLY), 'the 2xx body is not reported');
});

const callbackIdOf = (r: ReceivedCallback | undefined): unknown =>
  (JSON.parse(r?.form.get('fpx') ?? '{}') as { callback_id?: unknown }).callback_id;

test('every attempt of a callback carries one stable callback id, signed in the fpx JSON and repeated in a header; a redelivery gets a new id', async (t) => {
  const app = await startApp(t, FAST);
  const merchant = await startMerchant(t, (_form, nth) => (nth === 0 ? 500 : 200));
  runRelay(t, app);
  const created = await order(app, merchant);
  await pay(app, created, 'SBX00');
  await merchant.waitFor(2);
  const [callback] = await app.deps.store.callbacks.ofOrder(created.orderNo);
  const [failed, retried] = merchant.received;
  assert.deepEqual([failed?.answeredWith, retried?.answeredWith], [500, 200]);
  assert.equal(callbackIdOf(failed), `${created.orderNo}-${callback?.id}`);
  assert.equal(callbackIdOf(retried), callbackIdOf(failed), 'the retry carries the same id');
  for (const r of [failed, retried]) {
    assert.equal(r?.headers['x-amil-callback-id'], callbackIdOf(r), 'the header equals the signed field');
    assert.ok(r && verifyCallback(r.form, LZS_KEY), 'the signature (covering the id) verifies');
  }

  const again = await app.deps.store.callbacks.redeliver(created.orderNo, new Date().toISOString());
  await merchant.waitFor(3);
  const redelivered = merchant.received[2];
  assert.equal(callbackIdOf(redelivered), `${created.orderNo}-${again}`);
  assert.notEqual(callbackIdOf(redelivered), callbackIdOf(failed));
  assert.ok(redelivered && verifyCallback(redelivered.form, LZS_KEY));
});

test('callback ids never repeat across amil stores: a merchant deduplicating on them drops no paid order', async (t) => {
  // Two stores behind one merchant receiver: staging and production, or a SQLite file reopened after a move
  // to PostgreSQL. Each numbers its callback rows from 1; the merchant's table of ids seen is one.
  const merchant = await startMerchant(t);
  const ids: unknown[] = [];
  for (const app of [await startApp(t, FAST), await startApp(t, FAST)]) {
    runRelay(t, app);
    await pay(app, await order(app, merchant), 'SBX00');
    await merchant.waitFor(ids.length + 1);
    const received = merchant.received.at(-1);
    assert.ok(received && verifyCallback(received.form, LZS_KEY));
    ids.push(callbackIdOf(received));
  }
  assert.notEqual(ids[0], ids[1], 'the second paid order is not taken for a repeat of the first');
});
