/**
 * A browser refused under /dashboard/ gets the dashboard's own page (staff's words, the fields to correct,
 * the request id, the dashboard's headers), never the payer's "this payment cannot go on" page with its
 * sandbox banner; an API client still gets problem+json. Elsewhere the payer's page is unchanged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp } from '../helpers.ts';
import { DEMO_LZS_ADMIN, signIn } from '../support/dashboard.ts';

const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

test('a refusal under /dashboard/ is a dashboard page for a browser, problem+json for a client', async (t) => {
  const app = await startApp(t);
  const staff = await signIn(app, DEMO_LZS_ADMIN, 'LZS');
  const tooLong = '/dashboard/a/LZS/postings?start=2025-01-01&end=2026-11-30';

  const page = await staff.get(tooLong, BROWSER);
  assert.equal(page.status, 400);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  assert.equal(page.headers.get('cache-control'), 'no-store');
  const text = await page.text();
  assert.match(text, /amil dashboard/);
  assert.match(text, /<code>\/start<\/code>: at most 366 days before end/);
  assert.match(text, /Request [0-9a-f-]{36}/);
  assert.match(text, /href="\/dashboard\/"/);
  assert.doesNotMatch(text, /payment cannot go on|Sandbox/i);

  const notFound = await staff.get('/dashboard/a/LZS/no-such-page', BROWSER);
  assert.equal(notFound.status, 404);
  assert.match(await notFound.text(), /amil dashboard/);

  const client = await staff.get(tooLong, { accept: 'application/json' });
  assert.equal(client.status, 400);
  assert.match(client.headers.get('content-type') ?? '', /^application\/problem\+json/);

  // The payer's pages keep the payer's refusal page.
  const payer = await fetch(`${app.url}/pay/no-such-link`, { headers: BROWSER });
  assert.ok(payer.status >= 400);
  assert.doesNotMatch(await payer.text(), /amil dashboard/);
});
