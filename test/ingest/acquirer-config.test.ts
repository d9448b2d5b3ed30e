// Issue 12, items 1 and 3: production never reaches the sandbox; only an order's token holder sees it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../core/config.ts';
import { signPost } from '../../core/signatures.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { bankRecord, problemOf, startApp } from '../helpers.ts';
import { LZS_KEY, postOrder, startMerchant } from '../support/merchant.ts';

const PRODUCTION = {
  NODE_ENV: 'production',
  REPORT_TOKEN_SECRET: 'a-production-report-token-secret-of-32+',
  PAY_LINK_SECRET: 'a-production-pay-link-secret-of-32-chars',
  PUBLIC_BASE_URL: 'https://pay.example.my',
  PUBLIC_REPORTS_URL: 'https://reports.example.my',
};

test('production has no sandbox: it defaults to no acquirer and refuses ACQUIRER=sandbox unless STAGING=true', () => {
  assert.equal(loadConfig(PRODUCTION).checkout.acquirer, 'none');
  assert.throws(
    () => loadConfig({ ...PRODUCTION, ACQUIRER: 'sandbox' }),
    (err: unknown) => err instanceof ConfigError && /ACQUIRER=sandbox .*STAGING=true/.test(err.message),
  );
  assert.equal(
    loadConfig({ ...PRODUCTION, ACQUIRER: 'sandbox', STAGING: 'true' }).checkout.acquirer,
    'sandbox',
  );
  assert.equal(loadConfig({}).checkout.acquirer, 'sandbox', 'development keeps the sandbox');
  assert.throws(() => loadConfig({ ACQUIRER: 'paypal' }), /ACQUIRER must be one of sandbox, none/);
});

test('without an acquirer, checkout, pay pages and pay-link QR codes say payments are not configured; the rest runs', async (t) => {
  const app = await startApp(t, { ACQUIRER: 'none' });
  const order = {
    agency: 'LZS',
    refNo: 'INV-1',
    amount: '10.00',
    email: 'a@example.my',
    returnUrl: 'http://127.0.0.1/r',
  };
  const api = await postOrder(app, order);
  assert.equal(api.status, 503);
  assert.equal((await problemOf(api)).type, 'https://docs.amil.my/problems/payments-not-configured');
  const browser = await postOrder(app, order, { accept: 'text/html' });
  assert.equal(browser.status, 503);
  assert.match(await browser.text(), /Payments are not configured/);
  assert.equal(await app.deps.store.orders.orderByRef('LZS', 'INV-1'), undefined, 'nothing stored');

  const pay = await fetch(`${app.url}/pay/LZS/zakat-fitrah/X-1/10.00`, { headers: { accept: 'text/html' } });
  assert.equal(pay.status, 503);
  const qr = await fetch(
    `${app.url}/qr2/?q=${encodeURIComponent(`${app.url}/pay/LZS/zakat-fitrah/X-1/10.00`)}`,
  );
  assert.equal(qr.status, 503);
  const generator = await fetch(`${app.url}/api/qrcode/v1/generator`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: signPost({ agency: 'LZS', paymentCategory: 'zakat-fitrah', refNo: 'Q-1', amount: '10.00' }, LZS_KEY)
      .body,
  });
  assert.equal(generator.status, 503);
  // No sandbox route exists at all.
  const sandbox = await fetch(`${app.url}/sandbox/sbx_anything`, { method: 'POST', body: 'outcome=00' });
  assert.equal(sandbox.status, 404);

  // The bank webhook and the reports are untouched.
  assert.equal((await app.postBatch({ transactions: [bankRecord()] })).status, 200);
  assert.equal((await fetch(`${app.url}/api/version`)).status, 200);
});

test('a sandbox deployment says so: a banner on every payer page and fpx.sandbox in every callback', async (t) => {
  const app = await startApp(t);
  const merchant = await startMerchant(t);
  const res = await postOrder(app, {
    agency: 'LZS',
    refNo: `INV-${Date.now()}`,
    amount: '10.00',
    email: 'a@example.my',
    returnUrl: `${merchant.url}/return`,
  });
  const created = (await res.json()) as { orderNo: string; checkoutUrl: string };
  const checkout = await fetch(new URL(created.checkoutUrl, app.url), { headers: { accept: 'text/html' } });
  assert.match(
    await checkout.text(),
    /class="sandbox-banner"[^>]*>\s*Sandbox: this is a test payment service/,
  );
  const token = new URL(created.checkoutUrl, app.url).searchParams.get('t') ?? '';
  const paid = await fetch(`${app.url}/v2/checkout/${created.orderNo}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: new URLSearchParams({ t: token, method: 'fpx', bank: 'SBX00' }).toString(),
  });
  const result = await paid.text();
  assert.match(result, /class="sandbox-banner"/);
  assert.match(result, /&quot;sandbox&quot;:true/, 'the indirect callback form carries fpx.sandbox');

  await createInProcessRuntime(app.deps).drain();
  const direct = await merchant.find((r) => r.form.has('signature'), 'the direct callback');
  const fpx = JSON.parse(direct.form.get('fpx') ?? '{}') as { sandbox?: boolean };
  assert.equal(fpx.sandbox, true);
});

test("an order's return page needs the order's token: without it, or for an unknown order, the same 403", async (t) => {
  const app = await startApp(t);
  const res = await postOrder(app, {
    agency: 'LZS',
    refNo: `INV-${Date.now()}`,
    amount: '10.00',
    email: 'private@example.my',
    returnUrl: 'http://127.0.0.1/return',
  });
  const created = (await res.json()) as { orderNo: string; checkoutUrl: string };
  const token = new URL(created.checkoutUrl, app.url).searchParams.get('t') ?? '';
  const base = `${app.url}/v2/checkout`;
  const refusals = [
    `${base}/${created.orderNo}/return`,
    `${base}/${created.orderNo}/return?t=wrong`,
    `${base}/AM000000XXXXXXXXXX/return?t=${token}`,
  ];
  const bodies = [];
  for (const url of refusals) {
    const refused = await fetch(url);
    assert.equal(refused.status, 403, url);
    const body = await refused.text();
    assert.doesNotMatch(body, new RegExp(token));
    assert.doesNotMatch(body, /private@example\.my/);
    bodies.push((JSON.parse(body) as { detail: string }).detail);
  }
  assert.equal(new Set(bodies).size, 1, 'no difference between an unknown order and a wrong token');
  const own = await fetch(`${base}/${created.orderNo}/return?t=${token}`);
  assert.equal(own.status, 200);
});

test('small holes: /assets/constructor is 404; a pay link above the checkout maximum is refused on its page', async (t) => {
  const app = await startApp(t);
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    assert.equal((await fetch(`${app.url}/assets/${name}`)).status, 404, name);
  }
  assert.equal((await fetch(`${app.url}/assets/checkout.css`)).status, 200);
  const tooMuch = await fetch(`${app.url}/pay/LZS/zakat-fitrah/BIG-1/30000.01`, {
    headers: { accept: 'text/html' },
  });
  assert.equal(tooMuch.status, 404);
  assert.match(await tooMuch.text(), /above the most one payment can be \(RM 30000\.00\)/);
  assert.equal((await fetch(`${app.url}/pay/LZS/zakat-fitrah/BIG-1/30000.00`)).status, 200);
});
