import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runReconciliation } from '../../pipeline/recon/run-day.ts';
import pg from 'pg';
import { onCleanup, problemOf, reportToken, startApp } from '../helpers.ts';
import { dashboardUser, signIn } from '../support/dashboard.ts';
import { startPostgres } from '../support/postgres.ts';
import { AS_OF, DAY, generateDay } from '../support/recon-day.ts';
import { drainPipeline, loadDay } from '../support/recon-load.ts';

const DATED_ROUTES = ['/api/report/v1/payment', '/api/report/v1/zakat', '/api/report/v1/reconciliation'];

test('report responses: impossible dates refused, personal data never cached or sniffed', async (t) => {
  const app = await loadDay(t, generateDay(20));
  await drainPipeline(app);
  const run = await runReconciliation(app.deps, { sink: 'LZS', day: DAY, trigger: 'manual', asOf: AS_OF });
  const auth = { authorization: `Bearer ${await reportToken(app, ['LZS'], AS_OF)}` };
  const get = (pathAndQuery: string) => fetch(`${app.url}${pathAndQuery}`, { headers: auth });

  for (const route of DATED_ROUTES) {
    for (const [key, value] of [
      ['start', '2026-02-31'],
      ['end', '2026-13-01'],
      ['start', '2026-04-31'],
      ['end', '2025-02-29'],
      // No year 0000 (1 BC, then AD 1): PostgreSQL cannot read the start of its days (decision 277).
      ['start', '0000-01-01'],
      ['end', '0000-03-01'],
    ] as const) {
      await t.test(`${route} refuses ${key}=${value} with 400 naming /${key}`, async () => {
        const query = key === 'start' ? `start=${value}&end=2026-12-31` : `start=2025-01-01&end=${value}`;
        const response = await get(`${route}?${query}`);
        assert.equal(response.status, 400);
        const problem = await problemOf(response);
        assert.ok(
          problem.errors?.some((e) => e.pointer === `/${key}`),
          JSON.stringify(problem.errors),
        );
      });
    }
    await t.test(`${route} accepts a leap day that exists (2024-02-29)`, async () => {
      const response = await get(`${route}?start=2024-02-29&end=${DAY}`);
      assert.equal(response.status, 200, await response.clone().text());
    });
  }

  const PERSONAL = [
    `/api/report/v1/payment?start=${DAY}&end=${DAY}`,
    `/api/report/v1/payment?start=${DAY}&end=${DAY}&items=-1`,
    `/api/report/v1/fpxrequest?fpx_seller_order_no=none`,
    `/api/user/v1/transactions?email=aisyah@example.my`,
    `/api/report/v1/zakat?start=${DAY}&end=${DAY}`,
    `/api/report/v1/zakat?start=${DAY}&end=${DAY}&items=-1`,
    `/api/report/v1/reconciliation?start=${DAY}&end=${DAY}`,
    `/api/report/v1/reconciliation/${run.run.id}/workbook`,
  ];
  for (const pathAndQuery of PERSONAL) {
    await t.test(`${pathAndQuery} is sent with Cache-Control: no-store and nosniff`, async () => {
      const response = await get(pathAndQuery);
      await response.arrayBuffer();
      assert.ok(response.status === 200 || response.status === 404, String(response.status));
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    });
  }
});

test('a streamed report whose first read fails is answered 503, not a 200 cut short (postgresql)', async (t) => {
  const postgres = await startPostgres(t);
  const url = await postgres.createTestDatabase();
  const app = await startApp(t, { DATABASE_URL: url });
  const auth = { authorization: `Bearer ${await reportToken(app, ['LZS'])}` };
  const streamed = () => fetch(`${app.url}/api/report/v1/payment?items=-1`, { headers: auth });
  const ok = await streamed();
  assert.equal(ok.status, 200);
  assert.deepEqual(((await ok.json()) as { data: unknown[] }).data, []);

  const staff = await signIn(app, await dashboardUser(app, { LZS: 'viewer' }));
  // An operator's session holds the payments: the report's first read waits out the lock wait (5 s) and
  // fails as an outage, long after the envelope's opening could have gone out with a 200.
  const operator = new pg.Client({ connectionString: url });
  await operator.connect();
  onCleanup(t, () => operator.end());
  await operator.query('BEGIN');
  await operator.query('LOCK TABLE payments IN ACCESS EXCLUSIVE MODE');
  const response = await streamed();
  // The dashboard's exports the same way: an error page, not a file named payments-....csv (or .xlsx).
  const exported = (format: string) =>
    staff.get(`/dashboard/a/LZS/payments/export.${format}`, { accept: 'text/html' });
  const [csv, xlsx] = await Promise.all([exported('csv'), exported('xlsx')]);
  await operator.query('ROLLBACK');
  assert.equal(response.status, 503);
  assert.equal(response.headers.get('content-type'), 'application/problem+json');
  assert.equal(response.headers.get('retry-after'), '2');
  assert.equal(csv.status, 503);
  assert.equal(csv.headers.get('content-disposition'), null);
  assert.match(csv.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(xlsx.status, 503);
  assert.equal(xlsx.headers.get('content-disposition'), null);
  assert.match(xlsx.headers.get('content-type') ?? '', /^text\/html/);
});
