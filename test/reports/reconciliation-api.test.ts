import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { runReconciliation } from '../../pipeline/recon/run-day.ts';
import { signGet } from '../../core/signatures.ts';
import { problemOf, reportToken } from '../helpers.ts';
import { AS_OF, DAY, generateDay } from '../support/recon-day.ts';
import { drainPipeline, loadDay } from '../support/recon-load.ts';
import { readWorkbook } from '../support/workbook.ts';
import type { ReconciliationRuns } from '../../schemas/index.ts';

const LZS_KEY = 'c3b5a0e2-7f1d-4c8e-9a6b-2d4f8e1a3b5c';

test('an agency lists its reconciliation runs and downloads their workbooks; never another agency’s', async (t) => {
  const app = await loadDay(t, generateDay(150));
  await drainPipeline(app);
  const lzs = await runReconciliation(app.deps, { sink: 'LZS', day: DAY, trigger: 'manual', asOf: AS_OF });
  const ppz = await runReconciliation(app.deps, { sink: 'PPZ', day: DAY, trigger: 'manual', asOf: AS_OF });
  const token = await reportToken(app, ['LZS'], AS_OF);
  const auth = { authorization: `Bearer ${token}` };

  const list = await fetch(`${app.url}/api/report/v1/reconciliation?start=${DAY}&end=${DAY}`, {
    headers: auth,
  });
  assert.equal(list.status, 200);
  const body = (await list.json()) as ReconciliationRuns;
  assert.deepEqual(
    body.data.map((r) => [r.run_id, r.agency, r.business_date, r.as_of]),
    [[lzs.run.id, 'LZS', DAY, AS_OF.toISOString()]],
  );
  const run = body.data[0]!;
  assert.equal(run.totals.success.count, lzs.summary.byStatus.success.count);
  assert.equal(run.totals.success.amount, (lzs.summary.byStatus.success.sumSen / 100).toFixed(2));
  assert.equal(run.workbook.sha256, lzs.run.fileSha256);

  const download = await fetch(`${app.url}${run.workbook.url}`, { headers: auth });
  assert.equal(download.status, 200);
  assert.equal(
    download.headers.get('content-type'),
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  );
  assert.match(
    download.headers.get('content-disposition') ?? '',
    /^attachment; filename="LZS-2026-11-20-asof-.+\.xlsx"$/,
  );
  const bytes = Buffer.from(await download.arrayBuffer());
  assert.equal(createHash('sha256').update(bytes).digest('hex'), lzs.run.fileSha256);
  assert.equal((await readWorkbook(bytes)).sheet('Summary')[2]![1], DAY);

  // PPZ's run is not there for LZS's credentials: the same answer as a run that does not exist.
  const other = await fetch(`${app.url}/api/report/v1/reconciliation/${ppz.run.id}/workbook`, {
    headers: auth,
  });
  assert.equal(other.status, 404);
  assert.equal((await problemOf(other)).type, 'https://docs.amil.my/problems/not-found');
  const missing = await fetch(`${app.url}/api/report/v1/reconciliation/999999/workbook`, { headers: auth });
  assert.equal(missing.status, 404);
  const forbidden = await fetch(`${app.url}/api/report/v1/reconciliation?agency=PPZ`, { headers: auth });
  assert.equal(forbidden.status, 403);

  // The API key signs the GET as for every report (spec 5.3).
  const signed = signGet(
    `/api/report/v1/reconciliation/${lzs.run.id}/workbook`,
    { agency: 'LZS' },
    LZS_KEY,
    AS_OF,
  );
  assert.equal((await fetch(`${app.url}${signed}`)).status, 200);
  assert.equal((await fetch(`${app.url}/api/report/v1/reconciliation`)).status, 401);
  const bad = await fetch(`${app.url}/api/report/v1/reconciliation?start=2026-13-01&items=0`, {
    headers: auth,
  });
  assert.equal(bad.status, 400);
  assert.deepEqual(
    (await problemOf(bad)).errors?.map((e) => e.pointer),
    ['/start', '/items'],
  );
});
