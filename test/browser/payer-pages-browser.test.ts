/**
 * What payers see, in a real browser (Debian's chromium driven by playwright-core), at desktop and phone
 * width, with and without JavaScript: the pay page, checkout, the sandbox bank, a declined result, error
 * pages and the front door, in Malay and English (issues 14.8, 15.1-15.4). Every page visited is saved as a
 * screenshot under <tmpdir>/test-results/payer-pages, which the run empties first.
 */
import { before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { browser } from '../support/browser.ts';
import { onCleanup, startApp } from '../helpers.ts';

const AGENCY_NAME = 'Lembaga Zakat Selangor';
const SCREENSHOTS = path.join(tmpdir(), 'test-results', 'payer-pages');
const TEST_TIMEOUT_MS = 30_000;

before(() => {
  rmSync(SCREENSHOTS, { recursive: true, force: true });
  mkdirSync(SCREENSHOTS, { recursive: true });
});

const VARIANTS = [
  { name: 'phone (390 px) without JavaScript', width: 390, height: 844, javaScriptEnabled: false },
  { name: 'phone (390 px) with JavaScript', width: 390, height: 844, javaScriptEnabled: true },
  { name: 'desktop without JavaScript', width: 1280, height: 800, javaScriptEnabled: false },
  { name: 'desktop with JavaScript', width: 1280, height: 800, javaScriptEnabled: true },
] as const;

/** Saves the page as it looks, and checks it fits its width (no sideways scrolling on a phone). */
async function look(page: Page, variant: (typeof VARIANTS)[number], step: string): Promise<void> {
  const file = `${variant.width}-${variant.javaScriptEnabled ? 'js' : 'nojs'}-${step}.png`;
  await page.screenshot({ path: path.join(SCREENSHOTS, file), fullPage: true, timeout: 5000 });
  const scrollWidth = await page.evaluate<number>('document.documentElement.scrollWidth');
  assert.ok(
    scrollWidth <= variant.width,
    `${step}: no horizontal scroll at ${variant.width} px (${scrollWidth})`,
  );
}

async function visible(page: Page, text: string | RegExp, step: string): Promise<void> {
  assert.ok(await page.getByText(text).first().isVisible(), `${step}: ${String(text)} is visible`);
}

for (const variant of VARIANTS) {
  test(
    `a Malay payer at ${variant.name}: pay page, checkout, sandbox bank, a decline with a reason, switching to English, trying again, error pages`,
    { timeout: TEST_TIMEOUT_MS },
    async (t: TestContext) => {
      const app = await startApp(t);
      const context = await (
        await browser()
      ).newContext({
        viewport: { width: variant.width, height: variant.height },
        javaScriptEnabled: variant.javaScriptEnabled,
        locale: 'ms-MY',
      });
      context.setDefaultTimeout(5000);
      onCleanup(t, () => context.close());
      const page = await context.newPage();
      const link = `/pay/LZS/zakat-fitrah/FITRAH-${Math.random().toString(36).slice(2, 8)}/1234.50`;

      await page.goto(`${app.url}${link}`);
      await page.getByRole('heading', { name: `Bayar kepada ${AGENCY_NAME}` }).waitFor();
      await visible(page, 'Zakat Fitrah', 'pay page');
      await visible(page, 'RM 1,234.50', 'pay page');
      await look(page, variant, '1-pay-page-ms');
      await page.getByLabel('E-mel anda (resit dihantar ke sini)').fill('siti@example.my');
      await page.getByRole('button', { name: 'Teruskan ke pembayaran' }).click();

      await page.getByRole('button', { name: 'Bayar sekarang' }).waitFor();
      const bank = page.locator('select#bank');
      await page.getByRole('radio', { name: /^Kad kredit atau debit/ }).check();
      assert.equal(await bank.isVisible(), false, 'the bank list is hidden while card is chosen');
      await look(page, variant, '2-checkout-card-ms');
      await page.getByRole('radio', { name: /^Perbankan dalam talian FPX/ }).check();
      assert.equal(await bank.isVisible(), true, 'the bank list shows with FPX');
      assert.ok(await page.getByRole('link', { name: 'Batal dan kembali' }).isVisible(), 'a way back');
      await look(page, variant, '3-checkout-fpx-ms');
      await bank.selectOption('TEST0021');
      await page.getByRole('button', { name: 'Bayar sekarang' }).click();

      await page.getByRole('heading', { name: 'Bank kotak pasir' }).waitFor();
      await visible(page, /SBI Bank A/, 'sandbox bank');
      assert.equal(await page.getByText('TEST0021').count(), 0, 'the bank is named by name, not id');
      await look(page, variant, '4-sandbox-bank-ms');
      await page.getByRole('radio', { name: 'Tolak: baki tidak mencukupi (51)' }).check();
      await page.getByRole('button', { name: 'Sahkan' }).click();

      await page.getByRole('heading', { name: 'Pembayaran tidak berjaya' }).waitFor();
      await visible(page, /baki akaun tidak mencukupi/, 'result');
      await visible(page, 'SBI Bank A', 'result');
      await visible(page, /\(UTC\+8\)$/, 'result');
      await look(page, variant, '5-declined-ms');

      await page.getByRole('link', { name: 'English' }).click();
      await page.getByRole('heading', { name: 'Payment not successful' }).waitFor();
      await visible(page, /not enough money in the account/, 'result in English');
      await look(page, variant, '6-declined-en');
      await page.getByRole('link', { name: 'Pay this link again with a new attempt.' }).click();
      // The choice is remembered: the pay link opens in English although the browser prefers Malay.
      await page.getByRole('heading', { name: `Pay ${AGENCY_NAME}` }).waitFor();
      assert.equal(new URL(page.url()).pathname, link);

      await page.goto(`${app.url}/no-such-page`);
      await page.getByRole('heading', { name: 'Page not found' }).waitFor();
      await look(page, variant, '7-not-found-en');
      await page.goto(`${app.url}/v2/checkout/AM000000XXXXXXXXXX?t=nope&lang=ms`);
      await page.getByRole('heading', { name: 'Pembayaran ini tidak dapat diteruskan' }).waitFor();
      await visible(page, /tamat tempoh/, 'expired checkout');
      assert.equal(await page.getByText('Not allowed for these credentials').count(), 0);
      await look(page, variant, '8-forbidden-ms');
      await page.goto(`${app.url}/?lang=en`);
      await page.getByRole('link', { name: /^Demo shop/ }).waitFor();
      await look(page, variant, '9-landing-en');
    },
  );
}
