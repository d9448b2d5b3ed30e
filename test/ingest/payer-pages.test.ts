// Issue 14 item 8 and issue 15 items 1-4: what payers (and anyone with a browser) see.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { problemOf, startApp, type TestApp } from '../helpers.ts';
import { postOrder } from '../support/merchant.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const BROWSER = 'text/html,application/xhtml+xml,*/*;q=0.8';

interface OrderJson {
  orderNo: string;
  checkoutUrl: string;
}

async function newOrder(app: TestApp, overrides: Record<string, string> = {}): Promise<OrderJson> {
  const res = await postOrder(app, {
    agency: 'LZS',
    refNo: `INV-${Math.random().toString(36).slice(2, 10)}`,
    amount: '1234.50',
    email: 'ali@example.my',
    returnUrl: 'http://127.0.0.1:9/return',
    ...overrides,
  });
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()) as OrderJson;
}

/** Pays at a bank as the payer's browser would and returns the page the payer lands on. */
async function payAt(app: TestApp, created: OrderJson, bank: string, outcome?: string): Promise<string> {
  const token = new URL(created.checkoutUrl, app.url).searchParams.get('t') ?? '';
  const res = await fetch(`${app.url}/v2/checkout/${created.orderNo}/pay`, {
    method: 'POST',
    headers: { ...FORM, accept: BROWSER },
    body: new URLSearchParams({ t: token, method: 'fpx', bank }).toString(),
    redirect: 'manual',
  });
  assert.equal(res.status, 303);
  let location = res.headers.get('location') ?? '';
  if (outcome !== undefined) {
    const decided = await fetch(new URL(location, app.url), {
      method: 'POST',
      headers: FORM,
      body: `outcome=${outcome}`,
      redirect: 'manual',
    });
    location = decided.headers.get('location') ?? '';
  }
  const page = await fetch(new URL(location, app.url), { headers: { accept: BROWSER } });
  return page.text();
}

/** The `fpx` JSON of the result page's hidden callback form. */
function fpxOf(page: string): Record<string, string> {
  const raw = /name="fpx" value="([^"]*)"/.exec(page)?.[1] ?? '{}';
  return JSON.parse(raw.replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as Record<string, string>;
}

test("the bank name sent in callbacks is the bank's own name, without the sandbox page's hint", async (t) => {
  const app = await startApp(t);
  const created = await newOrder(app);
  const page = await payAt(app, created, 'TEST0021', '00');
  assert.equal(fpxOf(page).fpx_buyer_bank_name, 'SBI Bank A');
  const stored = await app.deps.store.orders.order(created.orderNo);
  assert.equal(stored?.bankName, 'SBI Bank A');
});

test('a browser preferring Malay gets Malay pages; ?lang=en switches to English and is remembered by a preference cookie', async (t) => {
  const app = await startApp(t);
  const created = await newOrder(app);
  const url = new URL(created.checkoutUrl, app.url);
  const malay = await fetch(url, {
    headers: { accept: BROWSER, 'accept-language': 'ms-MY,ms;q=0.9,en;q=0.5' },
  });
  const malayPage = await malay.text();
  assert.match(malayPage, /<html lang="ms">/);
  assert.match(malayPage, /Bayar kepada Lembaga Zakat Selangor/);
  assert.match(malayPage, /RM 1,234\.50/, 'amounts are grouped the Malaysian way');
  assert.match(malayPage, /hreflang="en"/, 'the page offers English');

  url.searchParams.set('lang', 'en');
  const switched = await fetch(url, { headers: { accept: BROWSER, 'accept-language': 'ms' } });
  assert.match(await switched.text(), /<html lang="en">/);
  const cookie = switched.headers.get('set-cookie') ?? '';
  assert.match(cookie, /^amil_lang=en;/);
  assert.match(cookie, /httponly/i);

  url.searchParams.delete('lang');
  const remembered = await fetch(url, {
    headers: { accept: BROWSER, 'accept-language': 'ms', cookie: 'amil_lang=en' },
  });
  assert.match(await remembered.text(), /Pay Lembaga Zakat Selangor/);
  const english = await fetch(url, { headers: { accept: BROWSER, 'accept-language': 'en-GB' } });
  assert.match(await english.text(), /<html lang="en">/);
});

test('the pay page names the category in the payer language, never its slug', async (t) => {
  const app = await startApp(t);
  const link = `${app.url}/pay/LZS/zakat-fitrah/FITRAH-42/28.00`;
  const malay = await (await fetch(link, { headers: { accept: BROWSER, 'accept-language': 'ms' } })).text();
  assert.match(malay, /<dd>Zakat Fitrah<\/dd>/);
  const english = await (
    await fetch(`${app.url}/pay/LZS/zakat-pendapatan/P-1/28.00?lang=en`, { headers: { accept: BROWSER } })
  ).text();
  assert.match(english, /<dd>Zakat on income<\/dd>/);
  assert.doesNotMatch(english, /<dd>zakat-pendapatan<\/dd>/);
});

test('a declined payment shows every receipt field in UTC+8, a readable reason and a way to try again', async (t) => {
  const app = await startApp(t);
  const created = await newOrder(app);
  const page = await payAt(app, created, 'SBX51');
  const stored = await app.deps.store.orders.order(created.orderNo);
  assert.equal(stored?.status, 'failed');
  assert.match(page, /Payment not successful/);
  assert.match(page, /not enough money in the account/i);
  for (const text of [
    created.orderNo,
    stored?.refNo ?? '?',
    stored?.fpxTxnId ?? '?',
    'Sandbox: always declines',
  ]) {
    assert.ok(page.includes(text), `the result page shows ${text}`);
  }
  assert.match(page, /\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} \(UTC\+8\)/, 'the time, the Malaysian way');
  assert.match(page, /RM 1,235\.50/, 'the total with the FPX add charge');
  assert.match(page, /Try again/);
});

test('a declined pay-link payment offers its pay link again', async (t) => {
  const app = await startApp(t);
  const link = '/pay/LZS/zakat-fitrah/FITRAH-7/28.00';
  const posted = await fetch(`${app.url}${link}`, {
    method: 'POST',
    headers: { ...FORM, accept: BROWSER },
    body: 'email=siti%40example.my',
    redirect: 'manual',
  });
  const location = posted.headers.get('location') ?? '';
  const orderNo = /\/v2\/checkout\/([^/?]+)/.exec(location)?.[1] ?? '';
  const page = await payAt(app, { orderNo, checkoutUrl: location }, 'SBXBC');
  assert.match(page, /You cancelled the payment/);
  assert.ok(page.includes(`href="${link}"`), 'the try-again link is the pay link');
});

test('error pages speak plainly to payers while API clients keep the same problem+json', async (t) => {
  const app = await startApp(t);
  const body = new URLSearchParams({
    agency: 'LZS',
    refNo: 'INV-SIG',
    amount: '10.00',
    email: 'ali@example.my',
    returnUrl: 'http://127.0.0.1:9/return',
    exp: String(Math.floor(Date.now() / 1000) + 30),
    signature: 'ab'.repeat(32),
  }).toString();
  const api = await fetch(`${app.url}/v2/checkout`, {
    method: 'POST',
    headers: { ...FORM, accept: 'application/json' },
    body,
  });
  assert.equal(api.status, 401);
  const problem = await problemOf(api);
  assert.equal(problem.title, 'The signature does not match the request');

  const browser = await fetch(`${app.url}/v2/checkout`, {
    method: 'POST',
    headers: { ...FORM, accept: BROWSER },
    body,
  });
  assert.equal(browser.status, 401);
  const page = await browser.text();
  assert.doesNotMatch(page, /The signature does not match the request/);
  assert.doesNotMatch(page, /<p><\/p>/, 'no empty detail box');
  assert.match(page, /could not be checked/);
  assert.match(page, /Go back to the shop or website/);

  const forged = await (
    await fetch(`${app.url}/v2/checkout/AM000000XXXXXXXXXX?t=nope`, {
      headers: { accept: BROWSER, 'accept-language': 'ms' },
    })
  ).text();
  assert.doesNotMatch(forged, /Not allowed for these credentials/);
  assert.match(forged, /<html lang="ms">/);
  assert.match(forged, /tamat tempoh/);
});

test('an already paid order says so, and never asks the payer to try again', async (t) => {
  const app = await startApp(t);
  const created = await newOrder(app, { refNo: 'INV-PAID-1' });
  await payAt(app, created, 'SBX00');
  const again = await postOrder(
    app,
    {
      agency: 'LZS',
      refNo: 'INV-PAID-1',
      amount: '1234.50',
      email: 'ali@example.my',
      returnUrl: 'http://127.0.0.1:9/return',
    },
    { accept: BROWSER },
  );
  assert.equal(again.status, 409);
  const page = await again.text();
  assert.match(page, /already been paid/);
  assert.doesNotMatch(page, /try again/i);
  assert.doesNotMatch(page, /is already paid\./, 'no refNo developer sentence');
});

test('GET / in a browser is a landing page; unknown paths are readable 404s for browsers and problem+json for API clients', async (t) => {
  const app = await startApp(t);
  const landing = await fetch(`${app.url}/`, { headers: { accept: BROWSER } });
  assert.equal(landing.status, 200);
  const page = await landing.text();
  for (const href of ['/demo/shop', '/docs/', '/api/openapi.json']) {
    assert.ok(page.includes(`href="${href}"`), `the landing page links ${href}`);
  }
  const docs = await fetch(`${app.url}/docs/`, { headers: { accept: BROWSER } });
  assert.equal(docs.status, 200);
  assert.match(await docs.text(), /href="\/docs\/checkout\.md"/);
  const doc = await fetch(`${app.url}/docs/checkout.md`);
  assert.equal(doc.status, 200);
  assert.match(doc.headers.get('content-type') ?? '', /^text\/plain; charset=utf-8/);
  assert.equal((await fetch(`${app.url}/docs/..%2Fpackage.json`)).status, 404);

  const missing = await fetch(`${app.url}/no-such-page`, { headers: { accept: BROWSER } });
  assert.equal(missing.status, 404);
  assert.match(missing.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(await missing.text(), /This page does not exist/);

  const api = await fetch(`${app.url}/no-such-page`);
  assert.equal(api.status, 404);
  assert.equal(api.headers.get('content-type'), 'application/problem+json');
  assert.equal((await problemOf(api)).title, 'Not found');
  const root = await fetch(`${app.url}/`, { headers: { accept: 'application/json' } });
  assert.equal(root.status, 404);
});

test('a pay page given a wrong e-mail shows the form again with a plain message in the payer language', async (t) => {
  const app = await startApp(t);
  const link = `${app.url}/pay/LZS/zakat-fitrah/FITRAH-9/28.00`;
  const refused = await fetch(link, {
    method: 'POST',
    headers: { ...FORM, accept: BROWSER, 'accept-language': 'ms' },
    body: 'email=not-an-email',
  });
  assert.equal(refused.status, 422);
  const page = await refused.text();
  assert.match(page, /<input id="email" name="email" type="email"/, 'the form is there to correct it');
  assert.match(page, /Masukkan alamat e-mel yang sah/);
  assert.match(page, /<dd>Zakat Fitrah<\/dd>/);
  const api = await fetch(link, { method: 'POST', headers: FORM, body: 'email=not-an-email' });
  assert.equal(api.status, 422);
  assert.equal((await problemOf(api)).errors?.[0]?.pointer, '/email');
});
