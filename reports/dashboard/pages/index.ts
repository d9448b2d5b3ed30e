/** The dashboard's read pages (overview, payments, bank postings, callbacks, reconciliation). */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Deps } from '../../../core/deps.ts';
import { SafeHtml, type SafeHtml as Html } from '../../../core/html.ts';
import { businessDate } from '../../../core/time.ts';
import { sendWorkbook } from '../../reconciliation-routes.ts';
import { recordAudit } from '../audit.ts';
import { requireAdmin, sendHtml, sendRefusal } from '../guards.ts';
import { csrfField, dashboardPage, type DashboardNav } from '../layout.ts';
import { dashboardStateOf, type DashboardState } from '../state.ts';
import { CALLBACK_STATES, callbacksBody } from './callbacks.ts';
import { agencyBase } from './format.ts';
import { overviewBody } from './overview.ts';
import { METHODS, orderBody, paymentsBody } from './payments.ts';
import { CSV_TYPE, paymentsCsv, paymentsXlsx, XLSX_TYPE } from './payments-export.ts';
import { postingsBody } from './postings.ts';
import { PAGE_SIZE, QueryReader, daysBefore } from './query.ts';
import { runBody, runsBody } from './reconciliation.ts';

/** Days the overview's chart covers, today included. */
const CHART_DAYS = 30;
/** Runs the reconciliation page lists at most. */
const RUNS_SHOWN = 100;

/** What a notice in the query says after a form was sent (POST, then redirect, then this). */
const NOTICES: Record<string, string> = {
  redelivered: 'The callback was queued again; the pipeline delivers it in a moment.',
  remailed: 'The workbook was queued to be e-mailed again to the report recipients.',
  'no-callback': 'This order has no callback to send again.',
};

/** The page a non-member gets too: another agency's order or run looks exactly like a missing one. */
const notFound = (ctx: Context) => sendRefusal(ctx, 404, 'Not found', 'There is no such page for you here.');

const stateOf = (ctx: Context) => dashboardStateOf(ctx);
/** The CSRF field for an admin's forms; null for a viewer, who is shown none. */
const adminCsrf = (state: DashboardState): Html | null =>
  state.role === 'admin' ? new SafeHtml(csrfField(state)) : null;

function send(ctx: Context, title: string, active: DashboardNav, body: Html): void {
  const notice = typeof ctx.query.notice === 'string' ? NOTICES[ctx.query.notice] : undefined;
  sendHtml(
    ctx,
    200,
    dashboardPage(stateOf(ctx), { title, active, body: body.value, ...(notice && { status: notice }) }),
  );
}

function paymentFilter(ctx: Context, today: string) {
  const q = new QueryReader(ctx);
  const { start, end } = q.days(today);
  const approved = q.choice('approved', ['0', '1'] as const);
  const order = q.text('order', 64);
  const ref = q.text('ref', 64);
  const method = q.choice(
    'method',
    METHODS.map(([m]) => m),
  );
  const page = q.page();
  q.done();
  return {
    query: { start, end, approved, order, ref, method },
    filter: {
      agency: stateOf(ctx).agency,
      firstDay: start,
      lastDay: end,
      ...(approved !== undefined && { approved: approved === '1' }),
      ...(order !== undefined && { orderNo: order }),
      ...(ref !== undefined && { refNo: ref }),
      ...(method !== undefined && { method }),
    },
    page,
  };
}

const runIdOf = (ctx: Context) => {
  const text = String((ctx.params as Record<string, string | undefined>).runId ?? '');
  return /^\d{1,12}$/.test(text) ? Number(text) : undefined;
};

/**
 * Registers the pages on the agency router (prefix `/dashboard/a/:agency`): the session, membership and
 * CSRF guards already ran, so `ctx.state.dashboard` is set. Every read names the agency in its query, so
 * another agency's order or run is not found (404), as a missing one is.
 */
export function registerDashboardPages(router: Router, deps: Deps): void {
  const { dashboardReads: reads } = deps.store;
  const today = () => businessDate(deps.clock.now());

  router.get('/', async (ctx) => {
    const day = today();
    const data = await reads.overview(stateOf(ctx).agency, daysBefore(day, CHART_DAYS - 1), day);
    send(ctx, 'Overview', 'overview', overviewBody(stateOf(ctx).agency, day, data));
  });

  router.get('/payments', async (ctx) => {
    const { query, filter, page } = paymentFilter(ctx, today());
    const { rows, total } = await reads.paymentsPage(filter, PAGE_SIZE, page * PAGE_SIZE);
    send(
      ctx,
      'Payments',
      'payments',
      paymentsBody(stateOf(ctx).agency, query, { rows, total, page, size: PAGE_SIZE }),
    );
  });

  for (const format of ['csv', 'xlsx'] as const) {
    router.get(`/payments/export.${format}`, async (ctx) => {
      const { query, filter } = paymentFilter(ctx, today());
      const rows = reads.paymentRows(filter);
      const name = `payments-${filter.agency}-${query.start}_${query.end}.${format}`;
      const body = format === 'csv' ? await paymentsCsv(rows) : await paymentsXlsx(rows, deps.clock.now());
      // Once the body's first read is done: a store failing at once is an error page, not a file.
      ctx.set('Content-Disposition', `attachment; filename="${name}"`);
      ctx.type = format === 'csv' ? CSV_TYPE : XLSX_TYPE;
      ctx.body = body;
    });
  }

  router.get('/payments/:orderNo', async (ctx) => {
    const state = stateOf(ctx);
    const order = await reads.order(state.agency, String(ctx.params.orderNo));
    if (!order) return notFound(ctx);
    send(ctx, `Order ${order.orderNo}`, 'payments', orderBody(state.agency, order, adminCsrf(state)));
  });

  // The same effect as `amil callbacks redeliver`: the order's latest callback sent again as a new one.
  router.post('/payments/:orderNo/redeliver', requireAdmin, async (ctx) => {
    const state = stateOf(ctx);
    const order = await reads.order(state.agency, String(ctx.params.orderNo));
    if (!order) return notFound(ctx);
    const id = await deps.store.callbacks.redeliver(order.orderNo, deps.clock.now().toISOString());
    if (id !== undefined)
      await recordAudit(deps, state, 'callback.redeliver', order.orderNo, { callbackId: id });
    ctx.status = 303;
    ctx.redirect(
      `${agencyBase(state.agency)}/payments/${encodeURIComponent(order.orderNo)}?notice=${id === undefined ? 'no-callback' : 'redelivered'}`,
    );
  });

  router.get('/postings', async (ctx) => {
    const q = new QueryReader(ctx);
    const { start, end } = q.days(today());
    const code = q.text('code', 64);
    const stateCode = q.text('state', 64);
    const type = q.text('type', 64);
    const page = q.page();
    q.done();
    const agency = stateOf(ctx).agency;
    const filter = {
      agency,
      firstDay: start,
      lastDay: end,
      ...(code !== undefined && { code }),
      ...(stateCode !== undefined && { state: stateCode }),
      ...(type !== undefined && { type }),
    };
    const [{ rows, total }, codes] = await Promise.all([
      reads.postingsPage(filter, PAGE_SIZE, page * PAGE_SIZE),
      reads.postingCodes(filter),
    ]);
    send(
      ctx,
      'Bank postings',
      'postings',
      postingsBody(agency, { start, end, code, state: stateCode, type }, codes, {
        rows,
        total,
        page,
        size: PAGE_SIZE,
      }),
    );
  });

  router.get('/callbacks', async (ctx) => {
    const q = new QueryReader(ctx);
    const callbackState = q.choice('state', CALLBACK_STATES);
    const page = q.page();
    q.done();
    const state = stateOf(ctx);
    const data = await reads.callbacksPage(
      { agency: state.agency, ...(callbackState !== undefined && { state: callbackState }) },
      PAGE_SIZE,
      page * PAGE_SIZE,
    );
    send(
      ctx,
      'Callbacks',
      'callbacks',
      callbacksBody(state.agency, callbackState, { ...data, page, size: PAGE_SIZE }, adminCsrf(state)),
    );
  });

  router.get('/reconciliation', async (ctx) => {
    const q = new QueryReader(ctx);
    const start = q.text('start');
    const end = q.text('end');
    if (start !== undefined || end !== undefined) q.days(today());
    q.done();
    const agency = stateOf(ctx).agency;
    const runs = await reads.runs(agency, {
      ...(start !== undefined && { firstDay: start }),
      ...(end !== undefined && { lastDay: end }),
      limit: RUNS_SHOWN,
    });
    send(ctx, 'Reconciliation', 'reconciliation', runsBody(agency, { start, end }, runs));
  });

  const runOf = async (ctx: Context) => {
    const id = runIdOf(ctx);
    return id === undefined ? undefined : await reads.run(stateOf(ctx).agency, id);
  };

  router.get('/reconciliation/:runId', async (ctx) => {
    const run = await runOf(ctx);
    if (!run) return notFound(ctx);
    const state = stateOf(ctx);
    send(
      ctx,
      `Run ${run.id}: ${run.businessDate}`,
      'reconciliation',
      runBody(state.agency, run, adminCsrf(state)),
    );
  });

  router.get('/reconciliation/:runId/workbook', async (ctx) => {
    const run = await runOf(ctx);
    if (!run) return notFound(ctx);
    await sendWorkbook(ctx, deps, run);
  });

  // Re-mail: a job of its own through the outbox, like the nightly e-mail (pipeline/jobs/recon.ts).
  router.post('/reconciliation/:runId/remail', requireAdmin, async (ctx) => {
    const run = await runOf(ctx);
    if (!run) return notFound(ctx);
    const state = stateOf(ctx);
    await deps.store.reconRuns.requestRemail(run.id, deps.clock.now().toISOString());
    await recordAudit(deps, state, 'reconciliation.remail', String(run.id), { day: run.businessDate });
    ctx.status = 303;
    ctx.redirect(`${agencyBase(state.agency)}/reconciliation/${run.id}?notice=remailed`);
  });
}
