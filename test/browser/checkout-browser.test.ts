/**
 * Hosted checkout in a real browser (Debian's chromium driven by playwright-core), end to end as a payer
 * meets it (spec 2.1, 2.4, 6): the merchant's signed form, the checkout page, the sandbox bank, the result
 * page posting the indirect callback to the merchant, and the signed direct callback from the relay.
 * Chromium is required: when /usr/bin/chromium is missing these tests fail (CI installs it).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { signPost, verifyCallback } from '../../core/signatures.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { browser } from '../support/browser.ts';
import { onCleanup, startApp, type TestApp } from '../helpers.ts';
import {
  LZS_KEY,
  MERCHANT_REPLY,
  startMerchant,
  type Merchant,
  type ReceivedCallback,
} from '../support/merchant.ts';

const AGENCY_NAME = 'Lembaga Zakat Selangor';
const SCREENSHOTS = path.join(tmpdir(), 'test-results', 'checkout-browser');
const TEST_TIMEOUT_MS = 20_000;

interface Flow {
  app: TestApp;
  merchant: Merchant;
  context: BrowserContext;
  page: Page;
  refNo: string;
}

/**
 * The app, a relay delivering direct callbacks, the merchant, and a browser page. Cleanups run in reverse:
 * the browser context closes, then the relay stops, then the merchant and the app close.
 */
async function setUp(
  t: TestContext,
  contextOptions: Parameters<Browser['newContext']>[0] = {},
): Promise<Flow> {
  const app = await startApp(t);
  const merchant = await startMerchant(t);
  const relay = createInProcessRuntime(app.deps, { pollMs: 20, maxAttempts: 8, backoffMs: 10 });
  relay.start();
  onCleanup(t, () => relay.stop());
  const refNo = `INV-${Math.random().toString(36).slice(2, 10).toUpperCase()}`;
  merchant.shop({
    action: `${app.url}/v2/checkout`,
    fields: {
      agency: 'LZS',
      refNo,
      amount: '10.00',
      email: 'ali@example.my',
      returnUrl: `${merchant.url}/return`,
    },
    apiKey: LZS_KEY,
  });
  const context = await (await browser()).newContext(contextOptions);
  context.setDefaultTimeout(5000);
  onCleanup(t, () => context.close());
  const page = await context.newPage();
  return { app, merchant, context, page, refNo };
}

/** Runs the test body; on any failure saves a full-page screenshot, prints where, and rethrows. */
async function withScreenshot(t: TestContext, page: Page, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const file = path.join(
      SCREENSHOTS,
      `${t.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}-${Date.now()}.png`,
    );
    let where: string;
    try {
      await page.screenshot({ path: file, fullPage: true, timeout: 3000 });
      where = `screenshot of the page at failure (${page.url()}): ${file}`;
    } catch (shotErr) {
      where = `no screenshot could be taken: ${(shotErr as Error).message}`;
    }
    console.error(where);
    t.diagnostic(where);
    throw err;
  }
}

/** The merchant's page to the sandbox bank: submit the shop form, check the checkout page, pay by FPX. */
async function payOnCheckout(flow: Flow): Promise<string> {
  const { page, merchant, app, refNo } = flow;
  await page.goto(`${merchant.url}/shop`);
  await page.getByRole('button', { name: 'Pay with amil' }).click();
  // Post/redirect/get: the merchant's POST lands on the order's own checkout URL.
  await page.waitForURL(new RegExp(`^${app.url}/v2/checkout/AM[0-9A-Z]+\\?t=`));

  await page.getByRole('heading', { name: `Pay ${AGENCY_NAME}` }).waitFor();
  for (const text of [AGENCY_NAME, refNo, 'RM 10.00']) {
    assert.ok(
      await page.getByText(text, { exact: true }).isVisible(),
      `${text} is visible on the checkout page`,
    );
  }
  const note = (await page.getByText(/A receipt goes to ali@example\.my/).textContent()) ?? '';
  const orderNo = /Order (AM\w+)\./.exec(note)?.[1];
  assert.ok(orderNo, `the checkout page names its order: ${note}`);

  await page.getByRole('radio', { name: /^FPX online banking/ }).check();
  assert.equal(await page.locator('input[name=method]:checked').inputValue(), 'fpx');
  await page.locator('select#bank').selectOption('TEST0021');
  await page.getByRole('button', { name: 'Pay now' }).click();

  await page.getByRole('heading', { name: 'Sandbox bank' }).waitFor();
  assert.match(page.url(), new RegExp(`^${app.url}/sandbox/`));
  assert.ok(await page.getByText('RM 11.00', { exact: true }).isVisible(), 'the bank is asked for the gross');
  await page.getByRole('radio', { name: 'Approve (00)' }).check();
  await page.getByRole('button', { name: 'Confirm' }).click();
  return orderNo;
}

const isIndirect = (r: ReceivedCallback) =>
  r.method === 'POST' && r.path === '/return' && !r.form.has('signature');
const isDirect = (r: ReceivedCallback) =>
  r.method === 'POST' && r.path === '/return' && r.form.has('signature');

/** The indirect callback of 6: unsigned, success, gross amount, extraData left out when empty. */
function assertIndirect(indirect: ReceivedCallback, orderNo: string, refNo: string): void {
  assert.equal(indirect.contentType, 'application/x-www-form-urlencoded');
  assert.match(String(indirect.headers['user-agent']), /Chrome/, 'posted by the browser');
  const form = Object.fromEntries(indirect.form);
  assert.equal(indirect.form.getAll('orderNo').length, 1);
  assert.equal(form.signature, undefined);
  assert.equal(form.status, 'success');
  assert.equal(form.orderNo, orderNo);
  assert.equal(form.refNo, refNo);
  assert.equal(form.agency, 'LZS');
  assert.equal(form.amount, '11.00', 'gross: 10.00 and the FPX add charge');
  assert.equal(form.addCharge, '1.00');
  assert.ok(!indirect.form.has('extraData'), 'extraData is omitted when empty');
  assert.ok(form.fpxTxnId, 'fpxTxnId is set');
  assert.ok(form.fpxTxnTime, 'fpxTxnTime is set');
  const fpx = JSON.parse(form.fpx ?? '') as Record<string, unknown>;
  assert.equal(fpx.payment_method, 'fpx');
  assert.equal(fpx.fpx_debit_auth_code, '00');
}

test(
  'hosted checkout in a browser: FPX via the sandbox bank, both callbacks reach the merchant',
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const flow = await setUp(t);
    const { page, merchant, refNo } = flow;
    await withScreenshot(t, page, async () => {
      const orderNo = await payOnCheckout(flow);

      // The result page stays in view for a few seconds, its button ready, then its script posts the
      // indirect callback by itself to the merchant's returnUrl.
      await page.getByRole('heading', { name: 'Payment successful' }).waitFor();
      assert.ok(await page.getByText('SBI Bank A', { exact: true }).isVisible(), 'the result names the bank');
      await page.waitForTimeout(1000);
      assert.equal(merchant.received.filter(isIndirect).length, 0, 'the payer reads the result first');
      assert.ok(await page.getByRole('button', { name: `Return to ${AGENCY_NAME}` }).isVisible());
      await page.waitForURL(`${merchant.url}/return`, { timeout: 10_000 });
      await page.getByText(MERCHANT_REPLY).waitFor();
      assertIndirect(await merchant.find(isIndirect, 'indirect callback', 1000), orderNo, refNo);

      // The direct callback, server to server through the relay: signed, and the signature holds.
      const direct = await merchant.find(isDirect, 'direct callback', 5000);
      assert.equal(direct.contentType, 'application/x-www-form-urlencoded');
      assert.ok(verifyCallback(direct.form, LZS_KEY), 'the direct callback signature verifies');
      assert.equal(direct.form.get('status'), 'success');
      assert.equal(direct.form.get('orderNo'), orderNo);
      assert.equal(direct.form.get('refNo'), refNo);
      assert.equal(direct.form.get('amount'), '10.00', 'net: the amount of the order');
      assert.equal(direct.form.get('addCharge'), '1.00');
      const fpx = JSON.parse(direct.form.get('fpx') ?? '') as Record<string, unknown>;
      assert.equal(fpx.fpx_debit_auth_code, '00');

      // The check can fail: one field changed, or the signature dropped, and it no longer verifies.
      const tampered = new URLSearchParams(direct.form);
      tampered.set('amount', '110.00');
      assert.equal(verifyCallback(tampered, LZS_KEY), false);
      const unsigned = new URLSearchParams(direct.form);
      unsigned.delete('signature');
      assert.equal(verifyCallback(unsigned, LZS_KEY), false);

      // One of each, and the browser never sent the merchant a GET to the returnUrl (spec 7).
      assert.equal(merchant.received.filter(isIndirect).length, 1);
      assert.equal(merchant.received.filter(isDirect).length, 1);
      assert.ok(!merchant.received.some((r) => r.method === 'GET' && r.path.startsWith('/return')));
    });
  },
);

test(
  'without JavaScript the result page waits, and its button posts the indirect callback',
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const flow = await setUp(t, { javaScriptEnabled: false });
    const { page, merchant, app, refNo } = flow;
    await withScreenshot(t, page, async () => {
      const orderNo = await payOnCheckout(flow);

      await page.getByRole('heading', { name: 'Payment successful' }).waitFor();
      const button = page.getByRole('button', { name: `Return to ${AGENCY_NAME}` });
      assert.ok(await button.isVisible(), 'the result page shows a button back to the merchant');
      // Give a script the time it would need: nothing is posted while scripts are off.
      await page.waitForTimeout(300);
      assert.match(page.url(), new RegExp(`^${app.url}/v2/checkout/${orderNo}/return\\?t=[\\w-]+$`));
      assert.equal(merchant.received.filter(isIndirect).length, 0, 'no auto-submit without JavaScript');

      await button.click();
      await page.waitForURL(`${merchant.url}/return`);
      await page.getByText(MERCHANT_REPLY).waitFor();
      assertIndirect(await merchant.find(isIndirect, 'indirect callback', 1000), orderNo, refNo);
      const direct = await merchant.find(isDirect, 'direct callback', 5000);
      assert.ok(verifyCallback(direct.form, LZS_KEY));
      assert.equal(direct.form.get('orderNo'), orderNo);
    });
  },
);

test(
  'the checkout page at phone width: no horizontal scroll, every control labelled',
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const app = await startApp(t);
    const context = await (await browser()).newContext({ viewport: { width: 375, height: 740 } });
    context.setDefaultTimeout(5000);
    onCleanup(t, () => context.close());
    const page = await context.newPage();
    await withScreenshot(t, page, async () => {
      // An order opened as an API client would, then its checkout page in the browser.
      const response = await fetch(`${app.url}/v2/checkout`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: signPost(
          {
            agency: 'LZS',
            refNo: `INV-PHONE-${Date.now()}`,
            amount: '10.00',
            email: 'ali@example.my',
            returnUrl: 'http://127.0.0.1:9/return',
          },
          LZS_KEY,
        ).body,
      });
      assert.equal(response.status, 201, await response.clone().text());
      const { checkoutUrl } = (await response.json()) as { checkoutUrl: string };
      await page.goto(`${app.url}${checkoutUrl}`);
      await page.getByRole('heading', { name: `Pay ${AGENCY_NAME}` }).waitFor();

      const scrollWidth = await page.evaluate<number>('document.documentElement.scrollWidth');
      assert.ok(scrollWidth <= 375, `no horizontal scroll at 375 px (scrollWidth ${scrollWidth})`);

      const bank = page.getByLabel('Your bank');
      assert.equal(await bank.count(), 1);
      assert.equal(await bank.getAttribute('id'), 'bank');
      for (const name of [/^FPX online banking/, /^Credit or debit card/, /^E-wallet/]) {
        assert.equal(await page.getByRole('radio', { name }).count(), 1, `a radio named ${String(name)}`);
      }
      assert.ok(await page.getByRole('button', { name: 'Pay now' }).isVisible());

      // Every visible control has a label (radios inside theirs); the names below are the offenders.
      const unlabelled = await page.evaluate<
        string[]
      >(`[...document.querySelectorAll('input, select, textarea')]
      .filter((el) => el.type !== 'hidden')
      .filter((el) => el.labels.length === 0 && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
      .map((el) => el.name || el.id || el.tagName)`);
      assert.deepEqual(unlabelled, []);
      const radiosOutsideLabels = await page.evaluate<
        string[]
      >(`[...document.querySelectorAll('input[type=radio]')]
      .filter((el) => !el.closest('label')).map((el) => el.value)`);
      assert.deepEqual(radiosOutsideLabels, []);
      assert.equal(await page.locator('input[type=radio]').count(), 3);
    });
  },
);
