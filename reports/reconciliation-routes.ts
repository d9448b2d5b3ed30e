import { createReadStream, existsSync } from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Deps } from '../core/deps.ts';
import { DomainError } from '../core/errors.ts';
import { formatSen } from '../core/money.ts';
import type { ReconRunRow } from '../core/store/index.ts';
import { reportAgency, requireReportAuth } from './auth.ts';
import { checkDate, one, privateResponse } from './query.ts';
import type { FieldError, ReconciliationRuns } from '../schemas/index.ts';
import type { Headline } from './reconciliation/summary.ts';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const MAX_RUNS = 500;

/**
 * The reconciliation runs of the {reports_url} host: an agency lists its runs and downloads their
 * workbooks, with the report API's credentials. Another agency's run answers 404, like a missing one.
 */
export function mountReconciliationReports(router: Router, deps: Deps): void {
  router.get('/api/report/v1/reconciliation', privateResponse, requireReportAuth(deps), async (ctx) => {
    const agency = reportAgency(ctx);
    const { start, end, items } = listQuery(ctx);
    const runs = await deps.store.reconRuns.list({
      sink: agency,
      firstDay: start,
      lastDay: end,
      limit: items,
    });
    const data = await Promise.all(runs.map(async (run) => runJson(run, await deliveriesOf(deps, run))));
    const body: ReconciliationRuns = { status: 'OK', data };
    ctx.body = body;
  });

  router.get(
    '/api/report/v1/reconciliation/:runId/workbook',
    privateResponse,
    requireReportAuth(deps),
    async (ctx) => {
      const granted = ctx.state.agencies as string[];
      const id = /^\d{1,12}$/.test(ctx.params.runId ?? '') ? Number(ctx.params.runId) : undefined;
      const run = id === undefined ? undefined : await deps.store.reconRuns.get(id);
      if (!run || !granted.includes(run.sink))
        throw new DomainError('not-found', 'No such reconciliation run.');
      sendWorkbook(ctx, deps, run);
    },
  );
}

/** Sends a run's workbook as a download (with its SHA-256 as Digest); 404 when the file is no longer kept. */
export function sendWorkbook(ctx: Context, deps: Deps, run: ReconRunRow): void {
  const file = path.resolve(deps.config.dataDir, run.file);
  if (!existsSync(file)) throw new DomainError('not-found', 'The workbook of this run is no longer kept.');
  ctx.type = XLSX;
  ctx.set('Content-Disposition', `attachment; filename="${path.basename(file)}"`);
  ctx.set('Digest', `sha-256=${Buffer.from(run.fileSha256, 'hex').toString('base64')}`);
  ctx.length = run.fileBytes;
  ctx.body = createReadStream(file);
}

async function deliveriesOf(deps: Deps, run: ReconRunRow) {
  return (await deps.store.reconRuns.deliveries(run.id)).map((d) => ({
    attempt: d.attempt,
    at: d.at,
    outcome: d.outcome,
    recipients: d.recipients,
  }));
}

type RunJson = ReconciliationRuns['data'][number];

function runJson(run: ReconRunRow, deliveries: RunJson['deliveries']): RunJson {
  const h = run.totals as Headline;
  const total = (t: { count: number; sumSen: number }) => ({ count: t.count, amount: formatSen(t.sumSen) });
  return {
    run_id: run.id,
    agency: run.sink,
    business_date: run.businessDate,
    trigger: run.trigger,
    as_of: run.asOf,
    finished_at: run.finishedAt,
    fingerprint: run.fingerprint,
    workbook: {
      url: `/api/report/v1/reconciliation/${run.id}/workbook`,
      file_name: path.basename(run.file),
      sha256: run.fileSha256,
      bytes: run.fileBytes,
    },
    input_counts: run.inputCounts,
    totals: {
      success: total(h.success),
      pending: total(h.pending),
      failed: total(h.failed),
      pending_roll_balances: h.pendingBalances,
      adjustments: {
        count: h.adjustments.count,
        change_to_collected: formatSen(h.adjustments.collectedDeltaSen),
      },
    },
    previous_run: run.previousRun,
    changes: run.changes,
    deliveries,
  };
}

function listQuery(ctx: Context): { start?: string; end?: string; items: number } {
  const errors: FieldError[] = [];
  const start = one(ctx, 'start');
  const end = one(ctx, 'end');
  checkDate('start', start, errors);
  checkDate('end', end, errors);
  const itemsText = one(ctx, 'items') ?? '100';
  if (!/^\d{1,3}$/.test(itemsText) || Number(itemsText) < 1 || Number(itemsText) > MAX_RUNS)
    errors.push({ pointer: '/items', message: `must be 1 to ${MAX_RUNS}` });
  if (errors.length > 0) throw new DomainError('bad-request', 'The query is not valid.', errors);
  return { start, end, items: Number(itemsText) };
}
