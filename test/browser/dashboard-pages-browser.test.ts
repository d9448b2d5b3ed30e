/**
 * The dashboard's read pages in a real browser (Debian's chromium driven by playwright-core): the demo admin
 * signs in, redelivers a callback, downloads a workbook; every page is checked by axe-core and saved as a
 * screenshot at desktop and phone width under test/.screenshots/dashboard/ (test/run.mjs empties it before a
 * run; a file run alone overwrites its own pictures).
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { runReconciliation } from '../../pipeline/recon/run-day.ts';
import { browser } from '../support/browser.ts';
import { REPO_ROOT } from '../helpers.ts';
import { AS_OF, DAY, generateDay } from '../support/recon-day.ts';
import { drainPipeline, loadDay } from '../support/recon-load.ts';
import { readWorkbook } from '../support/workbook.ts';

const SCREENSHOTS = path.join(REPO_ROOT, 'test/.screenshots/dashboard');
const WIDTHS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

before(() => mkdirSync(SCREENSHOTS, { recursive: true }));

interface DemoUser {
  email: string;
  password: string;
  agencies: Record<string, string>;
}

/** The demo admin of LZS, as the README lists it (from the demo seed). */
function demoAdmin(): DemoUser {
  const seed = JSON.parse(readFileSync(path.join(REPO_ROOT, 'fixtures/demo/seed.json'), 'utf8')) as {
    dashboardUsers: DemoUser[];
  };
  const user = seed.dashboardUsers.find((u) => u.agencies.LZS === 'admin');
  assert.ok(user, 'the demo seed has an LZS admin');
  return user;
}

/** No serious or critical accessibility violation on the page (axe-core's WCAG 2.1 A and AA rules). */
async function accessible(page: Page, step: string): Promise<void> {
  const result = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
    .analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
    `${step}: accessibility`,
  );
}

test(
  'the demo admin signs in, reads every page at desktop and phone width, redelivers a callback and downloads a workbook',
  { timeout: 120_000 },
  async (t) => {
    const app = await loadDay(t, generateDay(120));
    await drainPipeline(app);
    const run = await runReconciliation(app.deps, { sink: 'LZS', day: DAY, trigger: 'nightly', asOf: AS_OF });
    // One order with a callback that failed: something to redeliver.
    const { orders, callbacks } = app.deps.store;
    const at = AS_OF.toISOString();
    await orders.createOrder({
      orderNo: 'CB-FAILING',
      agencyCode: 'LZS',
      refNo: 'SHOP-1001',
      extraData: null,
      paymentCategory: 'zakat-fitrah',
      amountSen: 2800,
      email: 'payer@example.my',
      returnUrl: 'https://merchant.lzs.example.my/return',
      formToken: 'token',
      at,
    });
    await orders.startAttempt('CB-FAILING', {
      paymentMethod: 'fpx',
      bankId: null,
      bankName: null,
      addChargeSen: 100,
      acquirerRef: 'ACQ-CB-FAILING',
      at,
    });
    await orders.settle(
      'CB-FAILING',
      { status: 'success', code: '00', txnId: 'T', txnTime: at, source: 'test' },
      at,
      () => ({ url: 'https://merchant.lzs.example.my/callback', fields: { orderNo: 'CB-FAILING' } }),
    );
    const [callback] = await callbacks.ofOrder('CB-FAILING');
    assert.ok(callback);
    await callbacks.finishAttempt(
      callback.id,
      { at, statusCode: 500, latencyMs: 321, error: null, responsePrefix: '' },
      { state: 'dead' },
    );

    const user = demoAdmin();
    const base = `${app.url}/dashboard/a/LZS`;
    const pages = [
      ['overview', `${base}/`],
      ['payments', `${base}/payments?start=2026-11-19&end=2026-11-21`],
      ['order', `${base}/payments/CB-FAILING`],
      ['postings', `${base}/postings?start=${DAY}&end=${DAY}`],
      ['callbacks', `${base}/callbacks`],
      ['reconciliation', `${base}/reconciliation`],
      ['run', `${base}/reconciliation/${run.run.id}`],
    ] as const;

    for (const size of WIDTHS) {
      const context = await (
        await browser()
      ).newContext({ viewport: { width: size.width, height: size.height }, acceptDownloads: true });
      t.after(() => context.close());
      context.setDefaultTimeout(10_000);
      const page = await context.newPage();
      await page.goto(`${app.url}/dashboard/login`);
      await page.getByLabel(/e-mail/i).fill(user.email);
      await page.getByLabel(/password/i).fill(user.password);
      await page.getByRole('button', { name: /sign in/i }).click();
      await page.waitForURL(`${base}/`);

      for (const [name, url] of pages) {
        await page.goto(url);
        assert.ok(await page.locator('h1').first().isVisible(), `${name}: has its heading`);
        await accessible(page, `${name} at ${size.name}`);
        // Wide tables scroll inside their own box: the page itself never scrolls sideways.
        const scrollWidth = await page.evaluate<number>('document.documentElement.scrollWidth');
        assert.ok(scrollWidth <= size.width, `${name} fits ${size.width} px (${scrollWidth})`);
        await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${size.name}.png`), fullPage: true });
      }
    }

    const context = await (await browser()).newContext({ acceptDownloads: true });
    t.after(() => context.close());
    const page = await context.newPage();
    await page.goto(`${app.url}/dashboard/login`);
    await page.getByLabel(/e-mail/i).fill(user.email);
    await page.getByLabel(/password/i).fill(user.password);
    await page.getByRole('button', { name: /sign in/i }).click();
    await page.waitForURL(`${base}/`);

    // Redeliver from the callbacks page: a new callback of the order is queued.
    await page.getByRole('link', { name: /^Callbacks$/ }).click();
    await page.getByRole('button', { name: 'Redeliver CB-FAILING' }).click();
    await page.waitForURL(`${base}/payments/CB-FAILING?notice=redelivered`);
    assert.match((await page.getByRole('status').textContent()) ?? '', /queued again/);
    const after = await callbacks.ofOrder('CB-FAILING');
    assert.deepEqual(
      after.map((c) => c.state),
      ['dead', 'queued'],
    );

    // Download the night's workbook from the reconciliation page and open it.
    await page.goto(`${base}/reconciliation`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: path.basename(run.run.file) }).click(),
    ]);
    const file = await download.path();
    const workbook = await readWorkbook(file);
    assert.equal(workbook.sheet('Summary')[2]?.[1], DAY);
  },
);
