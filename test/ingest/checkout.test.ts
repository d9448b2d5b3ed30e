import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { verifyCallback } from '../../core/signatures.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { orderAt, problemOf, startApp, type TestApp } from '../helpers.ts';
import { LZS_KEY, postOrder, startMerchant } from '../support/merchant.ts';
import { paymentCount } from '../support/orders.ts';

const OTHER_KEY = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';

interface OrderJson {
  orderNo: string;
  status: string;
  resumed: boolean;
  checkoutUrl: string;
}

const order = (returnUrl: string, overrides: Record<string, string> = {}) => ({
  agency: 'LZS',
  refNo: `INV-${Math.random().toString(36).slice(2, 10)}`,
  amount: '10.00',
  email: 'ali@example.my',
  returnUrl,
  ...overrides,
});

/** Pays an order as the payer's browser would: the checkout form, then back from the acquirer. */
async function pay(app: TestApp, created: OrderJson, method: string, bank = ''): Promise<Response> {
  const token = new URL(created.checkoutUrl, app.url).searchParams.get('t') ?? '';
  const res = await fetch(`${app.url}/v2/checkout/${created.orderNo}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: new URLSearchParams({ t: token, method, bank }).toString(),
    redirect: 'manual',
  });
  assert.equal(res.status, 303);
  return fetch(new URL(res.headers.get('location') ?? '', app.url), { headers: { accept: 'text/html' } });
}

/** The hidden fields of the result page's form (the indirect callback), as the browser would post them. */
function indirectFields(page: string): { action: string; fields: Record<string, string> } {
  const action = /<form id="callback-form" method="post" action="([^"]+)"/.exec(page)?.[1] ?? '';
  const fields: Record<string, string> = {};
  for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\s*\/?>/g)) {
    fields[m[1] ?? ''] = (m[2] ?? '').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
  }
  return { action, fields };
}

test('a signed 10.00 order paid by FPX with a 1.00 add charge: the indirect callback says 11.00 gross, the signed direct one 10.00 with addCharge 1.00', async (t) => {
  const app = await startApp(t);
  const merchant = await startMerchant(t);
  const res = await postOrder(app, order(`${merchant.url}/return`, { extraData: 'ABC123' }));
  assert.equal(res.status, 201);
  const created = (await res.json()) as OrderJson;
  assert.match(created.orderNo, /^AM\d{6}[0-9A-Z]{10}$/);
  assert.equal(created.status, 'pending');

  const checkout = await fetch(new URL(created.checkoutUrl, app.url), { headers: { accept: 'text/html' } });
  assert.equal(checkout.status, 200);
  const page = await checkout.text();
  assert.match(page, /Pay Lembaga Zakat Selangor/);
  assert.match(page, /RM 10\.00/);
  assert.match(checkout.headers.get('content-security-policy') ?? '', /default-src 'none'/);

  const result = await pay(app, created, 'fpx', 'SBX00');
  assert.equal(result.status, 200);
  const { action, fields } = indirectFields(await result.text());
  assert.equal(action, `${merchant.url}/return`);
  assert.equal(fields.status, 'success');
  assert.equal(fields.amount, '11.00', 'gross: 10.00 + the 1.00 FPX add charge');
  assert.equal(fields.addCharge, '1.00');
  assert.equal(fields.extraData, 'ABC123');
  assert.equal(fields.signature, undefined, 'the indirect callback is not signed');
  const fpx = JSON.parse(fields.fpx ?? '{}') as Record<string, string>;
  assert.equal(fpx.payment_method, 'fpx');
  assert.equal(fpx.fpx_debit_auth_code, '00');
  assert.equal(fpx.fpx_seller_ex_order_no, `${fields.refNo}~ABC123`);

  const relay = createInProcessRuntime(app.deps);
  await relay.drain();
  assert.equal(merchant.received.length, 1);
  const direct = merchant.received[0];
  assert.equal(direct?.contentType, 'application/x-www-form-urlencoded');
  assert.ok(
    direct && verifyCallback(direct.form, LZS_KEY),
    'the merchant toolkit verifies the direct callback',
  );
  assert.equal(direct?.form.get('status'), 'success');
  assert.equal(direct?.form.get('orderNo'), created.orderNo);
  // The direct callback's amount is the order's (net), so a merchant can check it against the order it
  // made; the add charge stands beside it. The indirect one above stays gross (spec 2.4).
  assert.equal(direct?.form.get('amount'), '10.00', 'net: the amount of the order');
  assert.equal(direct?.form.get('addCharge'), '1.00');
  const tampered = new URLSearchParams(direct?.form);
  tampered.set('amount', '1100.00');
  assert.equal(verifyCallback(tampered, LZS_KEY), false);

  const again = await postOrder(app, order(`${merchant.url}/return`, { refNo: fields.refNo ?? '' }));
  assert.equal(again.status, 409);
  assert.equal((await problemOf(again)).type, 'https://docs.amil.my/problems/order-already-paid');
});

test('every field rule of 2.1 is refused with a pointer, and nothing is stored', async (t) => {
  const app = await startApp(t);
  const good = order('http://127.0.0.1:9/return');
  const cases: [Record<string, string>, string, string][] = [
    [{ ...good, refNo: 'INV~1' }, '/refNo', 'must not contain ~'],
    [{ ...good, refNo: 'INVÉ' }, '/refNo', 'must be ASCII'],
    [{ ...good, refNo: 'R'.repeat(256) }, '/refNo', 'at most 255 bytes'],
    [{ ...good, extraData: 'a-b' }, '/extraData', 'letters and digits'],
    [{ ...good, amount: '10' }, '/amount', 'exactly two decimals'],
    [{ ...good, amount: '10.5' }, '/amount', 'exactly two decimals'],
    [{ ...good, amount: '0.99' }, '/amount', 'at least 1.00'],
    [{ ...good, amount: '30000.01' }, '/amount', 'at most 30000.00'],
    [{ ...good, email: 'not-an-email' }, '/email', 'email address'],
    [{ ...good, returnUrl: 'ftp://127.0.0.1/x' }, '/returnUrl', 'http'],
    [{ ...good, returnUrl: 'https://evil.example.com/cb' }, '/returnUrl', 'not an allowed callback host'],
    [{ ...good, paymentCategory: 'zakat-kereta' }, '/paymentCategory', 'not a payment category'],
    [{ ...good, colour: 'red' }, '/colour', 'not an allowed property'],
  ];
  for (const [fields, pointer, message] of cases) {
    const res = await postOrder(app, fields);
    assert.equal(res.status, 422, `${pointer}: ${res.status}`);
    const problem = await problemOf(res);
    const error = problem.errors?.find((e) => e.pointer === pointer);
    assert.ok(error, `${pointer} in ${JSON.stringify(problem.errors)}`);
    assert.ok(error.message.includes(message), `${pointer}: "${error.message}" says "${message}"`);
  }
  const { refNo: _missing, ...withoutRefNo } = good;
  const missing = await problemOf(await postOrder(app, withoutRefNo));
  assert.deepEqual(
    missing.errors?.map((e) => [e.pointer, e.message]),
    [['/refNo', 'is required']],
  );
  assert.equal(await paymentCount(app.deps.store), 0);
});

test('signatures: required for agencies with a key, checked when sent, optional where the agency accepts unsigned orders', async (t) => {
  const app = await startApp(t);
  const fields = order('http://127.0.0.1:9/return');
  const unsigned = await postOrder(app, fields, { sign: false });
  assert.equal(unsigned.status, 401);
  assert.equal((await problemOf(unsigned)).type, 'https://docs.amil.my/problems/exp-missing');
  const wrongKey = await postOrder(app, fields, { key: '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9' });
  assert.equal((await problemOf(wrongKey)).type, 'https://docs.amil.my/problems/signature-mismatch');

  await app.deps.store.agencies.update('LZS', { settings: { acceptUnsignedOrders: true } });
  assert.equal((await postOrder(app, fields, { sign: false })).status, 201);
  const badlySigned = await postOrder(
    app,
    { ...fields, refNo: 'OTHER', exp: '1', signature: 'abc' },
    { sign: false },
  );
  assert.equal(badlySigned.status, 401, 'a signature sent is checked even when unsigned orders are accepted');
});

test('an unknown agency is answered as the QR generators answer it: as an agency that exists, whose signature does not verify', async (t) => {
  const app = await startApp(t);
  const fields = order('http://127.0.0.1:9/return');
  const unknown = { ...fields, agency: 'NOPE' };
  const cases: [string, Promise<Response>, string][] = [
    ['unsigned, a known agency', postOrder(app, fields, { sign: false }), 'exp-missing'],
    ['unsigned, an unknown agency', postOrder(app, unknown, { sign: false }), 'exp-missing'],
    ["signed with another agency's key", postOrder(app, fields, { key: OTHER_KEY }), 'signature-mismatch'],
    ['signed, an unknown agency', postOrder(app, unknown), 'signature-mismatch'],
    [
      'signed long ago, an unknown agency',
      postOrder(app, { ...unknown, exp: '1', signature: '0123456789abcdef' }, { sign: false }),
      'exp-expired',
    ],
  ];
  for (const [what, pending, type] of cases) {
    const res = await pending;
    assert.equal(res.status, 401, what);
    const text = await res.text();
    assert.equal((JSON.parse(text) as { type: string }).type, `https://docs.amil.my/problems/${type}`, what);
    assert.doesNotMatch(text, /NOPE|known agency/, `${what}: the answer does not say which agencies exist`);
  }
});

test('a refNo resumes its unpaid order at the same amount and is refused at another', async (t) => {
  const app = await startApp(t);
  const fields = order('http://127.0.0.1:9/return');
  const first = (await (await postOrder(app, fields)).json()) as OrderJson;
  const resumed = await postOrder(app, fields);
  assert.equal(resumed.status, 200);
  const body = (await resumed.json()) as OrderJson;
  assert.equal(body.orderNo, first.orderNo);
  assert.equal(body.resumed, true);
  const other = await postOrder(app, { ...fields, amount: '20.00' });
  assert.equal(other.status, 409);
  assert.equal((await problemOf(other)).type, 'https://docs.amil.my/problems/order-conflict');
});

test('a browser gets readable HTML pages for refusals, with the same status', async (t) => {
  const app = await startApp(t);
  const res = await postOrder(app, order('http://127.0.0.1:9/return', { amount: '0.50' }), {
    accept: 'text/html,application/xhtml+xml,*/*;q=0.8',
  });
  assert.equal(res.status, 422);
  assert.match(res.headers.get('content-type') ?? '', /text\/html/);
  const page = await res.text();
  assert.match(page, /<code>amount<\/code> must be at least 1\.00/);
  const forged = await fetch(`${app.url}/v2/checkout/AM000000XXXXXXXXXX?t=nope`, {
    headers: { accept: 'text/html' },
  });
  assert.equal(forged.status, 403);
});

test('the pay page of a link asks for an e-mail and continues into checkout; unknown agency or category is 404', async (t) => {
  const app = await startApp(t);
  const path = '/pay/LZS/zakat-fitrah/FITRAH%2042/28.00';
  const page = await fetch(`${app.url}${path}`, { headers: { accept: 'text/html' } });
  assert.equal(page.status, 200);
  assert.match(await page.text(), /FITRAH 42/);
  const submitted = await fetch(`${app.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: 'email=siti%40example.my',
  });
  assert.equal(submitted.status, 200);
  assert.match(await submitted.text(), /RM 28\.00/);
  const stored = await orderAt(app, submitted);
  assert.equal(stored?.paymentCategory, 'zakat-fitrah');
  assert.equal(stored?.returnUrl, '');
  for (const bad of [
    '/pay/NOPE/zakat-fitrah/X/1.00',
    '/pay/LZS/zakat-kereta/X/1.00',
    '/pay/LZS/zakat-fitrah/X/0.10',
  ]) {
    assert.equal((await fetch(`${app.url}${bad}`, { headers: { accept: 'text/html' } })).status, 404, bad);
  }
});

test('a checkout form with a field named __proto__, constructor or prototype is refused (400) naming it', async (t) => {
  const app = await startApp(t);
  for (const name of ['__proto__', 'constructor', 'prototype']) {
    const res = await fetch(`${app.url}/v2/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: `agency=LZS&refNo=R-1&amount=10.00&${name}=x`,
    });
    assert.equal(res.status, 400, name);
    const problem = await problemOf(res);
    assert.deepEqual(
      problem.errors?.map((e) => e.pointer),
      [`/${name}`],
    );
    assert.match(problem.detail ?? '', new RegExp(name));
  }
});

test('the demo shop builds its returnUrl from PUBLIC_BASE_URL, never from a forged Host header', async (t) => {
  const app = await startApp(t);
  const { port } = new URL(app.url);
  // fetch cannot forge Host; node:http sends the header as given.
  const page = await new Promise<string>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: '/demo/shop', headers: { host: 'attacker.example:80' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      },
    );
    req.on('error', reject);
    req.end();
  });
  const returnUrl = /name="returnUrl" value="([^"]*)"/.exec(page)?.[1];
  assert.equal(returnUrl, `${app.deps.config.publicUrls.base}/demo/receiver`);
  assert.ok(!page.includes('attacker.example'), 'the Host header appears nowhere on the page');
});

test("embedded mode: the demo shop posts a valid signed order, and the demo receiver verifies the direct callback and its amount; the payer's receipt is in data/mail", async (t) => {
  const app = await startApp(t);
  const shop = await (await fetch(`${app.url}/demo/shop`)).text();
  const fields = Object.fromEntries(
    [...shop.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\s*\/?>/g)].map((m) => [
      m[1],
      m[2],
    ]),
  ) as Record<string, string>;
  assert.equal(fields.returnUrl, `${app.url}/demo/receiver`);
  const created = (await (await postOrder(app, fields, { sign: false })).json()) as OrderJson;
  assert.equal(created.status, 'pending', 'the shop signed the order');
  await (await pay(app, created, 'fpx', 'SBX00')).text();
  await createInProcessRuntime(app.deps).drain();
  const received = await (await fetch(`${app.url}/demo/receiver`)).text();
  assert.match(received, /direct \(signed\): signature verified/);
  // The demo merchant checks what a careful merchant checks: the callback's amount against its order.
  assert.match(received, /amount 10\.00 \(add charge 1\.00\): matches the order/);
  // And the payer's receipt is in data/mail, as the README's quick start shows.
  const mails = readdirSync(path.join(app.dataDir, 'mail'));
  assert.equal(mails.length, 1);
  assert.match(
    mails[0] ?? '',
    /^.*-SANDBOX-Resit-pembayaran-Payment-receipt-Lembaga-Zakat-Selangor-DEMO-.*\.eml$/,
  );
});
