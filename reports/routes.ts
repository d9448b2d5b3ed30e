import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Deps } from '../core/deps.ts';
import { DomainError } from '../core/errors.ts';
import { formatSen } from '../core/money.ts';
import { businessDate, formatKl } from '../core/time.ts';
import { commit, startedAt, version } from '../core/version.ts';
import { reportAgency, requireReportAuth } from './auth.ts';

const MAX_ITEMS = 10_000;

/** The routes of the {reports_url} host. */
export function mountReports(router: Router, deps: Deps): void {
  router.get('/api/version', (ctx) => {
    ctx.body = {
      name: 'amil',
      version,
      commit,
      started_at: startedAt,
      api: { report: 'v1', checkout: 'v2' },
    };
  });
  router.get('/api/echo', (ctx) => {
    ctx.body = {
      status: 'OK',
      time: deps.clock.now().toISOString(),
      request_id: String(ctx.state.requestId),
      query: Object.fromEntries(new URLSearchParams(ctx.querystring)),
    };
  });
  router.get('/api/report/v1/zakat', requireReportAuth(deps), async (ctx) => {
    const agency = reportAgency(ctx);
    const { start, end, items, page } = pageQuery(ctx, businessDate(deps.clock.now()));
    const limit = items === -1 ? -1 : items;
    const { rows, total } = await deps.store.reports.zakatPage({
      sink: agency,
      start,
      end,
      limit,
      offset: items === -1 ? 0 : page * items,
    });
    ctx.body = {
      status: 'OK',
      data: rows.map((r) => ({
        orderno: r.orderno,
        created_date: formatKl(new Date(r.timeUtc)),
        business_date: r.businessDate,
        status: r.status,
        amount: formatSen(r.amountSen),
        name: r.name,
        email: r.email,
        zakat_name: r.zakatName,
        zakat_ic_no: r.icNo,
        zakat_phone: r.phone,
        zakat_state: r.state,
        zakat_type: r.type,
        zakat_type_raw: r.typeRaw,
        zakat_year: r.year,
        zakat_rate: r.rateSen === null ? null : formatSen(r.rateSen),
        zakat_dependant: r.dependants,
        exceptions: JSON.parse(r.exceptions) as string[],
        agency,
      })),
      stats: {
        total_pages: items === -1 ? 1 : Math.ceil(total / items),
        total_rows: total,
        page: items === -1 ? 0 : page,
        items,
      },
    };
  });
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** start/end (business dates, UTC+8; default today), items (page size, -1 = all) and page (0-based). */
function pageQuery(ctx: Context, today: string): { start: string; end: string; items: number; page: number } {
  const errors: { pointer: string; message: string }[] = [];
  const one = (key: string): string | undefined => {
    const value = ctx.query[key];
    if (Array.isArray(value)) throw new DomainError('repeated-parameter');
    return value;
  };
  const start = one('start') ?? today;
  const end = one('end') ?? start;
  for (const [key, value] of [
    ['start', start],
    ['end', end],
  ] as const) {
    if (!DATE.test(value) || Number.isNaN(Date.parse(value)))
      errors.push({ pointer: `/${key}`, message: 'must be a date, YYYY-MM-DD' });
  }
  if (errors.length === 0 && end < start)
    errors.push({ pointer: '/end', message: 'must not be before start' });
  const itemsText = one('items') ?? '100';
  const items = Number(itemsText);
  if (!/^(-1|\d{1,5})$/.test(itemsText) || items === 0 || items > MAX_ITEMS) {
    errors.push({ pointer: '/items', message: `must be 1 to ${MAX_ITEMS}, or -1 for every row` });
  }
  const pageText = one('page') ?? '0';
  if (!/^\d{1,7}$/.test(pageText))
    errors.push({ pointer: '/page', message: 'must be a whole number from 0' });
  if (errors.length > 0) throw new DomainError('bad-request', 'The query is not valid.', errors);
  return { start, end, items, page: Number(pageText) };
}
