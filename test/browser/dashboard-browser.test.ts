/**
 * The merchant dashboard in a real browser (Debian's chromium driven by playwright-core), at desktop and
 * phone width: the demo admin signs in, mints a report token on the API access page, copies it with the
 * copy button and uses it against the report API; a viewer is turned away from the admin page. Every page
 * is saved as a screenshot under test/.screenshots/dashboard/ (the test run empties it first) and checked
 * with axe-core.
 */
import { before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { browser } from '../support/browser.ts';
import { DEMO_LZS_ADMIN, dashboardUser } from '../support/dashboard.ts';
import { REPO_ROOT, onCleanup, startApp } from '../helpers.ts';

const SCREENSHOTS = path.join(REPO_ROOT, 'test/.screenshots/dashboard');
const TEST_TIMEOUT_MS = 60_000;

// test/run.mjs empties test/.screenshots/ before a run; a file run alone overwrites its own pictures.
before(() => mkdirSync(SCREENSHOTS, { recursive: true }));

const VARIANTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone (390 px)', width: 390, height: 844 },
] as const;

/**
 * Saves the page, checks it fits its width (no sideways scrolling on a phone) and that axe-core finds no
 * serious or critical accessibility violation (WCAG 2 A and AA rules).
 */
async function look(page: Page, variant: (typeof VARIANTS)[number], step: string): Promise<void> {
  await page.screenshot({
    path: path.join(SCREENSHOTS, `${variant.width}-${step}.png`),
    fullPage: true,
    timeout: 5000,
  });
  const scrollWidth = await page.evaluate<number>('document.documentElement.scrollWidth');
  assert.ok(
    scrollWidth <= variant.width,
    `${step}: no horizontal scroll at ${variant.width} px (${scrollWidth})`,
  );
  const { violations } = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21aa']).analyze();
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
    [],
    `${step}: axe-core finds no serious or critical violation`,
  );
}

for (const variant of VARIANTS) {
  test(
    `at ${variant.name}, the demo admin signs in, copies a new report token from the API access page, and the report API answers 200 to it`,
    { timeout: TEST_TIMEOUT_MS },
    async (t: TestContext) => {
      const app = await startApp(t);
      const context = await (
        await browser()
      ).newContext({
        viewport: { width: variant.width, height: variant.height },
      });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.url });
      context.setDefaultTimeout(5000);
      onCleanup(t, () => context.close());
      const page = await context.newPage();

      // A bookmark of the page while signed out: sign in, then land on it.
      await page.goto(`${app.url}/dashboard/a/LZS/api-access`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await look(page, variant, '1-sign-in');
      await page.getByLabel('E-mail').fill(DEMO_LZS_ADMIN.email);
      await page.getByLabel('Password').fill('not-the-password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'e-mail address or password is wrong' }).waitFor();
      await look(page, variant, '2-sign-in-refused');
      await page.getByLabel('Password').fill(DEMO_LZS_ADMIN.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'API access' }).waitFor();
      assert.equal(new URL(page.url()).pathname, '/dashboard/a/LZS/api-access');
      await look(page, variant, '3-api-access');

      await page.getByLabel('Valid for').selectOption('7d');
      await page.getByLabel('What it is for (optional)').fill('browser test');
      await page.getByRole('button', { name: 'Create token' }).click();
      const field = page.locator('#new-token');
      await field.waitFor();
      await page.getByRole('button', { name: 'Copy' }).first().click();
      await page.getByText('Copied.').waitFor();
      const copied = await page.evaluate<string>('navigator.clipboard.readText()');
      assert.equal(copied, await field.inputValue(), 'the clipboard holds the token shown');
      await look(page, variant, '4-token-minted');

      const report = await fetch(`${app.url}/api/report/v1/payment?agency=LZS`, {
        headers: { authorization: `Bearer ${copied}` },
      });
      assert.equal(report.status, 200);

      await page.getByRole('link', { name: 'Audit log' }).click();
      await page.getByRole('heading', { name: 'Audit log' }).waitFor();
      assert.ok(await page.getByRole('cell', { name: 'token.mint' }).first().isVisible());
      await look(page, variant, '5-audit');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByText('You are signed out.').waitFor();
      await page.goto(`${app.url}/dashboard/a/LZS/audit`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    },
  );

  test(
    `at ${variant.name}, a viewer reads the audit log but gets the admins-only page for API access`,
    { timeout: TEST_TIMEOUT_MS },
    async (t: TestContext) => {
      const app = await startApp(t);
      const viewer = await dashboardUser(app, { LZS: 'viewer', PPZ: 'viewer' });
      const context = await (
        await browser()
      ).newContext({
        viewport: { width: variant.width, height: variant.height },
      });
      context.setDefaultTimeout(5000);
      onCleanup(t, () => context.close());
      const page = await context.newPage();
      await page.goto(`${app.url}/dashboard/a/LZS/audit`);
      await page.getByLabel('E-mail').fill(viewer.email);
      await page.getByLabel('Password').fill(viewer.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Audit log' }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'API access' }).count(), 0, 'no admin menu item');
      await page.getByText('Switch agency').click();
      await look(page, variant, '6-viewer-audit');
      const refused = await page.goto(`${app.url}/dashboard/a/LZS/api-access`);
      assert.equal(refused?.status(), 403);
      await page.getByRole('heading', { name: 'Admins only' }).waitFor();
      await look(page, variant, '7-viewer-refused');
    },
  );
}
