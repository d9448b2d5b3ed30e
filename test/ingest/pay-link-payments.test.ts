// Issue 12, item 2: a pay link can never squat, take over or kill a merchant's order or another payer's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signedPayLinkUrl, type PayLink } from '../../core/payments/pay-link.ts';
import { fixedClock } from '../../core/clock.ts';
import { verifyCallback } from '../../core/signatures.ts';
import { sweepPendingPayments } from '../../pipeline/enquiry.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { orderAt, problemOf, startApp, tempDir, type TestApp } from '../helpers.ts';
import { runReconciliation } from '../../pipeline/recon/run-day.ts';
import { businessDate } from '../../core/time.ts';
import { LZS_KEY, postOrder, startMerchant } from '../support/merchant.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** A visitor of a pay link: opens it, gives an e-mail, lands on a checkout page of their own. */
async function visit(app: TestApp, link: string, email: string) {
  const page = await fetch(link, { headers: { accept: 'text/html' } });
  const posted = await fetch(link, {
    method: 'POST',
    headers: { ...FORM, accept: 'text/html' },
    body: new URLSearchParams({ email }).toString(),
    redirect: 'manual',
  });
  return { page, posted };
}

/**
 * Pays a visitor's order at a sandbox bank (SBX00 approves, SBXBC cancels, TEST0021 waits for a pick) and
 * follows the payer back to where the bank sends them (the return page settles the result).
 */
async function payAt(app: TestApp, checkoutLocation: string, bank: string): Promise<Response> {
  const url = new URL(checkoutLocation, app.url);
  const orderNo = /\/v2\/checkout\/([^/?]+)/.exec(url.pathname)?.[1] ?? '';
  const res = await fetch(`${app.url}/v2/checkout/${orderNo}/pay`, {
    method: 'POST',
    headers: { ...FORM, accept: 'text/html' },
    body: new URLSearchParams({ t: url.searchParams.get('t') ?? '', method: 'fpx', bank }).toString(),
    redirect: 'manual',
  });
  if (res.status === 303) {
    await fetch(new URL(res.headers.get('location') ?? '', app.url), { headers: { accept: 'text/html' } });
  }
  return res;
}

const signedLink = (app: TestApp, overrides: Partial<PayLink> = {}) =>
  signedPayLinkUrl(app.url, app.deps.config.payLinkSecret, {
    agency: 'LZS',
    paymentCategory: 'zakat-fitrah',
    refNo: 'HOUSE-7',
    amount: '28.00',
    extras: { household: 'A-7' },
    uses: 'once',
    ...overrides,
  });

test('a pay-link visitor can neither block nor take over the merchant order of the same refNo', async (t) => {
  const app = await startApp(t);
  const merchant = await startMerchant(t);
  // The squatter opens unsigned links for the merchant's next refNo, at another amount and at the same one.
  for (const amount of ['1.00', '10.00']) {
    const { posted } = await visit(
      app,
      `${app.url}/pay/LZS/zakat-fitrah/INV-900/${amount}`,
      'squat@evil.test',
    );
    assert.equal(posted.status, 303);
  }
  const res = await postOrder(app, {
    agency: 'LZS',
    refNo: 'INV-900',
    amount: '10.00',
    email: 'payer@example.my',
    returnUrl: `${merchant.url}/return`,
  });
  assert.equal(res.status, 201, 'the merchant order is created, not a 409 or a resumed squat');
  const created = (await res.json()) as { orderNo: string; resumed: boolean };
  assert.equal(created.resumed, false);
  const order = await app.deps.store.orders.order(created.orderNo);
  assert.equal(order?.email, 'payer@example.my');
  assert.equal(order?.returnUrl, `${merchant.url}/return`);
  assert.equal(order?.source, 'checkout');
});

test('each visitor of a link gets an order of their own and never sees another visitor', async (t) => {
  const app = await startApp(t);
  const link = signedLink(app, { uses: 'many' });
  const first = await visit(app, link, 'first@example.my');
  const second = await visit(app, link, 'second@example.my');
  const a = await orderAt(app, first.posted);
  const b = await orderAt(app, second.posted);
  assert.notEqual(a?.orderNo, b?.orderNo);
  assert.notEqual(a?.formToken, b?.formToken);
  const page = await fetch(new URL(second.posted.headers.get('location') ?? '', app.url), {
    headers: { accept: 'text/html' },
  });
  const text = await page.text();
  assert.match(text, /second@example\.my/);
  assert.doesNotMatch(text, /first@example\.my/);
  assert.doesNotMatch(text, new RegExp(a?.orderNo ?? 'none'));
});

test('a payer who cancels at the bank leaves the link usable for the next payer', async (t) => {
  const app = await startApp(t);
  const link = signedLink(app);
  const first = await visit(app, link, 'first@example.my');
  assert.equal((await payAt(app, first.posted.headers.get('location') ?? '', 'SBXBC')).status, 303);
  assert.equal((await orderAt(app, first.posted))?.status, 'failed');

  const second = await visit(app, link, 'second@example.my');
  assert.equal(second.page.status, 200);
  assert.equal(second.posted.status, 303);
  await payAt(app, second.posted.headers.get('location') ?? '', 'SBX00');
  assert.equal((await orderAt(app, second.posted))?.status, 'success');
});

test('a once link (the signed default) is paid once: then the pay page says so, before asking for an e-mail', async (t) => {
  const app = await startApp(t);
  const link = signedLink(app);
  const first = await visit(app, link, 'first@example.my');
  await payAt(app, first.posted.headers.get('location') ?? '', 'SBX00');

  const page = await fetch(link, { headers: { accept: 'text/html' } });
  assert.equal(page.status, 409);
  const text = await page.text();
  assert.match(text, /paid already/);
  assert.doesNotMatch(text, /type="email"/);
  const api = await fetch(link, { method: 'POST', headers: FORM, body: 'email=x%40example.my' });
  assert.equal((await problemOf(api)).type, 'https://docs.amil.my/problems/pay-link-paid');
});

test('while one payer of a once link is at the bank, a second cannot start paying it; a cancel frees it', async (t) => {
  const app = await startApp(t);
  const link = signedLink(app);
  const first = await visit(app, link, 'first@example.my');
  const second = await visit(app, link, 'second@example.my');
  // The first reaches the sandbox bank page and has not decided yet.
  const atBank = await payAt(app, first.posted.headers.get('location') ?? '', 'TEST0021');
  const bankPage = new URL(atBank.headers.get('location') ?? '', app.url);
  assert.match(bankPage.pathname, /^\/sandbox\//);

  const blocked = await payAt(app, second.posted.headers.get('location') ?? '', 'SBX00');
  assert.equal(blocked.status, 409);
  assert.match(await blocked.text(), /Someone is paying this link right now/);
  assert.equal((await orderAt(app, second.posted))?.acquirerRef, null, 'the second never reached the bank');

  // The first payer cancels at the bank and is sent back to the return page (which settles it).
  const back = await fetch(bankPage, {
    method: 'POST',
    headers: { ...FORM, accept: 'text/html' },
    body: 'outcome=BC',
  });
  assert.match(back.url, /\/return\?t=/);
  const paid = await payAt(app, second.posted.headers.get('location') ?? '', 'SBX00');
  assert.equal(paid.status, 303);
  assert.equal((await orderAt(app, second.posted))?.status, 'success');
});

test('a link signed for many payers takes every payment, and the report names the link of each', async (t) => {
  const app = await startApp(t);
  const link = signedLink(app, { refNo: 'MASJID-POSTER', uses: 'many' });
  assert.match(link, /uses=many&sig=/);
  for (const email of ['a@example.my', 'b@example.my']) {
    const { posted } = await visit(app, link, email);
    await payAt(app, posted.headers.get('location') ?? '', 'SBX00');
    assert.equal((await orderAt(app, posted))?.status, 'success');
  }
  const rows = await app.deps.store.paymentReport.find(['LZS'], { refNo: 'MASJID-POSTER' });
  assert.equal(rows.length, 2);
  const expected = link.slice(app.url.length);
  for (const row of rows) {
    assert.equal(row.source, 'pay-link');
    assert.equal(row.payLink, expected);
  }
  // Removing `uses=many` changes what was signed: refused.
  const stripped = link.replace('uses=many&', '');
  assert.equal((await fetch(stripped, { headers: { accept: 'text/html' } })).status, 403);
});

test('orders nobody takes to the bank expire: failed with XA, the merchant gets the signed direct callback, a pay link visitor needs none, nobody gets a receipt', async (t) => {
  const app = await startApp(t, { UNPAID_ORDER_EXPIRY_MS: '60000' });
  const merchant = await startMerchant(t);
  const res = await postOrder(app, {
    agency: 'LZS',
    refNo: 'INV-ABANDONED',
    amount: '10.00',
    email: 'payer@example.my',
    returnUrl: `${merchant.url}/return`,
  });
  const { orderNo } = (await res.json()) as { orderNo: string };
  const { posted } = await visit(app, `${app.url}/pay/LZS/zakat-fitrah/WALK-IN/5.00`, 'w@example.my');

  // Not yet: a minute has not passed.
  assert.equal(await sweepPendingPayments(app.deps), 0);
  const later = { ...app.deps, clock: fixedClock(new Date(Date.now() + 61_000)) };
  assert.equal(await sweepPendingPayments(later), 2);
  const merchantOrder = await app.deps.store.orders.order(orderNo);
  assert.deepEqual([merchantOrder?.status, merchantOrder?.debitAuthCode], ['failed', 'XA']);
  const callbacks = await app.deps.store.callbacks.ofOrder(orderNo);
  assert.deepEqual(
    callbacks.map((c) => c.status),
    ['failed'],
  );
  const visitor = await orderAt(app, posted);
  assert.deepEqual([visitor?.status, visitor?.debitAuthCode], ['failed', 'XA']);
  assert.equal((await app.deps.store.callbacks.ofOrder(visitor?.orderNo ?? '')).length, 0);

  // The merchant waiting for news gets it: the signed direct callback, failed with XA, for the order's
  // amount. Nothing was paid, so nobody gets a receipt. Delivered on the sweep's clock: the callback is due
  // from the time it was queued.
  await createInProcessRuntime(later).drain();
  const direct = await merchant.find((r) => r.form.has('signature'), 'direct callback');
  assert.ok(verifyCallback(direct.form, LZS_KEY));
  assert.deepEqual(
    ['status', 'orderNo', 'amount', 'addCharge', 'fpxTxnId'].map((k) => direct.form.get(k)),
    ['failed', orderNo, '10.00', '0.00', ''],
  );
  const fpx = JSON.parse(direct.form.get('fpx') ?? '{}') as Record<string, string>;
  assert.equal(fpx.fpx_debit_auth_code, 'XA');
  assert.equal(await app.deps.store.receipts.of(orderNo), undefined);
  assert.equal(await app.deps.store.receipts.of(visitor?.orderNo ?? ''), undefined);

  // Not money: the day's workbook counts the one paid order, not the two that expired unpaid.
  const paid = await visit(app, `${app.url}/pay/LZS/zakat-fitrah/WALK-IN-2/7.00`, 'p@example.my');
  await payAt(app, paid.posted.headers.get('location') ?? '', 'SBX00');
  await createInProcessRuntime(app.deps).drain();
  const { summary } = await runReconciliation(app.deps, {
    sink: 'LZS',
    day: businessDate(new Date()),
    trigger: 'manual',
    asOf: new Date(Date.now() + 120_000),
    dir: tempDir(t),
    mail: false,
  });
  assert.equal(summary.inputs.transactions, 1);
  assert.deepEqual([summary.byStatus.success.count, summary.byStatus.failed.count], [1, 0]);
});
