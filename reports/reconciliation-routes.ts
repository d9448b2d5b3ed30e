import { localWorkbook } from '../core/recon-workbook.ts';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import type { Context } from 'koa';
import type { Deps } from '../core/deps.ts';
import { DomainError } from '../core/errors.ts';
import { formatSen } from '../core/money.ts';
import type { AppRouter, InputState, StateWith } from '../core/http/state.ts';
import { validate } from '../core/http/validate.ts';
import type { ReconRunRow } from '../core/store/index.ts';
import { reportAgency, requireReportAuth } from './auth.ts';
import { privateResponse } from './query.ts';
import type { ReconciliationRuns, ReconciliationRunsQuery } from '../schemas/index.ts';
import type { Headline } from './reconciliation/summary.ts';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/**
 * The reconciliation runs of the {reports_url} host: an agency lists its runs and downloads their
 * workbooks, with the report API's credentials. Another agency's run answers 404, like a missing one.
 */
export function mountReconciliationReports(router: AppRouter, deps: Deps): void {
  router.get<InputState<ReconciliationRunsQuery, 'agencies'>>(
    '/api/report/v1/reconciliation',
    privateResponse,
    requireReportAuth(deps),
    validate(deps.validators, 'reconciliationRuns'),
    async (ctx) => {
      const { start, end, items } = ctx.state.input;
      const agency = reportAgency(ctx.state.agencies, ctx.state.input.agency);
      const runs = await deps.store.reconRuns.list({
        sink: agency,
        firstDay: start,
        lastDay: end,
        limit: items,
      });
      const data = await Promise.all(runs.map(async (run) => runJson(run, await deliveriesOf(deps, run))));
      const body: ReconciliationRuns = { status: 'OK', data };
      ctx.body = body;
    },
  );

  router.get<StateWith<'agencies'>>(
    '/api/report/v1/reconciliation/:runId/workbook',
    privateResponse,
    requireReportAuth(deps),
    async (ctx) => {
      const granted = ctx.state.agencies;
      const id = /^\d{1,12}$/.test(ctx.params.runId ?? '') ? Number(ctx.params.runId) : undefined;
      const run = id === undefined ? undefined : await deps.store.reconRuns.get(id);
      if (!run || !granted.includes(run.sink))
        throw new DomainError('not-found', 'No such reconciliation run.');
      await sendWorkbook(ctx, deps, run);
    },
  );
}

/** Sends a run's workbook as a download (with its SHA-256 as Digest); 404 when the file is no longer kept. */
export async function sendWorkbook(ctx: Context, deps: Deps, run: ReconRunRow): Promise<void> {
  const file = await localWorkbook(deps, run);
  if (file === undefined) throw new DomainError('not-found', 'The workbook of this run is no longer kept.');
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
