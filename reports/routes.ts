import type { Readable } from 'node:stream';
import { setImmediate as turn } from 'node:timers/promises';
import type { Deps } from '../core/deps.ts';
import { DomainError } from '../core/errors.ts';
import { formatSen } from '../core/money.ts';
import { businessDate, formatKl } from '../core/time.ts';
import { commit, startedAt, version } from '../core/version.ts';
import { reportAgencies, reportAgency, requireReportAuth } from './auth.ts';
import { checkDayRange, privateResponse } from './query.ts';
import type { AppRouter, InputState } from '../core/http/state.ts';
import { validate } from '../core/http/validate.ts';
import { primedStream } from '../core/http/primed-stream.ts';
import type { PaymentRow, ZakatReportRow } from '../core/store/index.ts';
import type {
  OrderQuery,
  OrderReport,
  PayerTransactions,
  PayerTransactionsQuery,
  PaymentReport,
  PaymentReportRow,
  PaymentReportQuery,
  ZakatReport,
  ZakatReportQuery,
} from '../schemas/index.ts';

/** The routes of the {reports_url} host. */
export function mountReports(router: AppRouter, deps: Deps): void {
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
  router.get<InputState<PaymentReportQuery, 'agencies'>>(
    '/api/report/v1/payment',
    privateResponse,
    requireReportAuth(deps),
    validate(deps.validators, 'paymentReport'),
    async (ctx) => {
      const query = ctx.state.input;
      // Without agency, a token's report covers all its agencies, each row naming its own.
      const agencies = reportAgencies(ctx.state.agencies, query.agency);
      // Without start/end, every payment; the dates are UTC+8 calendar days on created_date.
      const { start = '0001-01-01', end = '9999-12-31', items, page } = query;
      checkDayRange(start, end);
      const filter = {
        agency: agencies,
        firstDay: start,
        lastDay: end,
        ...(query.is_approved !== undefined && { isApproved: query.is_approved === '1' }),
        ...(query.seller_order_no !== undefined && { sellerOrderNo: query.seller_order_no }),
      };
      const report = deps.store.paymentReport;
      const body: PaymentReport | Readable = await pagedAnswer(ctx, items, page, paymentRow, {
        all: () => report.all(filter),
        page: (limit, offset) => report.page(filter, limit, offset),
      });
      ctx.body = body;
    },
  );

  router.get<InputState<OrderQuery, 'agencies'>>(
    '/api/report/v1/fpxrequest',
    privateResponse,
    requireReportAuth(deps),
    validate(deps.validators, 'order'),
    async (ctx) => {
      const { fpx_seller_order_no: orderNo, refno: refNo, agency } = ctx.state.input;
      if ((orderNo === undefined) === (refNo === undefined)) {
        throw new DomainError('bad-request', 'Give fpx_seller_order_no or refno, one of them.', [
          { pointer: '/fpx_seller_order_no', message: 'give this or refno' },
        ]);
      }
      // With refno, the order is looked up in the one agency asked for (refNo is unique per agency).
      const granted = ctx.state.agencies;
      const agencies = refNo !== undefined ? [reportAgency(granted, agency)] : granted;
      const [order] = await deps.store.paymentReport.find(agencies, {
        ...(orderNo !== undefined && { orderNo }),
        ...(refNo !== undefined && { refNo }),
      });
      if (!order)
        throw new DomainError('not-found', 'No such order among the agencies these credentials cover.');
      const callbacks = await deps.store.callbacks.ofOrder(order.orderNo);
      const body: OrderReport = {
        status: 'OK',
        data: {
          ...paymentRow(order),
          // A signed pay link's extras ({} when it had none); null for other orders (docs/qr.md).
          extras: order.extras === null ? null : (JSON.parse(order.extras) as Record<string, string>),
          history: order.events.map((e) => ({
            at: formatKl(new Date(e.at)),
            status: e.status,
            // "" before the bank answers (the order's creation), as every other code field of the API.
            fpx_debit_auth_code: e.debitAuthCode ?? '',
            source: e.source,
          })),
          // The direct callbacks of this order and every delivery attempt, for a merchant asking "did you call me?".
          callbacks: callbacks.map((c) => ({
            status: c.status,
            url: c.url,
            state: c.state,
            created_at: formatKl(new Date(c.createdAt)),
            next_attempt_at:
              c.state === 'queued' && c.nextAttemptAt ? formatKl(new Date(c.nextAttemptAt)) : null,
            attempts: c.attemptLog.map((a) => ({
              at: formatKl(new Date(a.at)),
              status_code: a.statusCode,
              latency_ms: a.latencyMs,
              error: a.error,
              response_prefix: a.responsePrefix,
            })),
          })),
        },
      };
      ctx.body = body;
    },
  );

  // A payer's history is personal data: it needs credentials, and shows only the agencies they cover.
  router.get<InputState<PayerTransactionsQuery, 'agencies'>>(
    '/api/user/v1/transactions',
    privateResponse,
    requireReportAuth(deps),
    validate(deps.validators, 'payerTransactions'),
    async (ctx) => {
      const { email, items, page, agency } = ctx.state.input;
      const history = deps.store.paymentReport;
      // Without agency, a token's history covers all its agencies, as its payment report does.
      const agencies = reportAgencies(ctx.state.agencies, agency);
      // Paged as the payment report is (decision 247): an address with thousands of payments is never read
      // and written in one piece.
      const body: PayerTransactions | Readable = await pagedAnswer(ctx, items, page, paymentRow, {
        all: () => history.allByEmail(email, agencies),
        page: (limit, offset) => history.byEmail(email, agencies, limit, offset),
      });
      ctx.body = body;
    },
  );

  // The default day is today's, in Kuala Lumpur; the default end is the start asked for. So the input
  // always has both, checked as if sent.
  const zakatDefaults = (query: Readonly<Record<string, string>>) => {
    const start = query.start ?? businessDate(deps.clock.now());
    return { start, end: query.end ?? start };
  };
  router.get<InputState<ZakatReportQuery & { start: string; end: string }, 'agencies'>>(
    '/api/report/v1/zakat',
    privateResponse,
    requireReportAuth(deps),
    validate(deps.validators, 'zakatReport', { defaults: zakatDefaults }),
    async (ctx) => {
      const { start, end, items, page, agency } = ctx.state.input;
      // Without agency, a token's report covers all its agencies, each row naming its own.
      const agencies = reportAgencies(ctx.state.agencies, agency);
      checkDayRange(start, end);
      const query = { sink: agencies, start, end };
      const report = deps.store.zakatReport;
      const body: ZakatReport | Readable = await pagedAnswer(ctx, items, page, zakatRow, {
        all: () => report.rows(query),
        page: (limit, offset) => report.page({ ...query, limit, offset }),
      });
      ctx.body = body;
    },
  );
}

/**
 * A bank posting as the zakat report shows it: every field of spec 2.5, `data.email` as `data_email` beside
 * the transaction's `email`, and the agency whose posting it is.
 */
function zakatRow(r: ZakatReportRow): ZakatReport['data'][number] {
  return {
    orderno: r.orderno,
    created_date: formatKl(new Date(r.timeUtc)),
    business_date: r.businessDate,
    status: r.status,
    amount: formatSen(r.amountSen),
    name: r.name,
    email: r.email,
    data_email: r.dataEmail,
    zakat_name: r.zakatName,
    zakat_ic_no: r.icNo,
    zakat_phone: r.phone,
    zakat_address: r.address,
    zakat_postcode: r.postcode,
    zakat_city: r.city,
    zakat_state: r.state,
    zakat_type: r.type,
    zakat_type_raw: r.typeRaw,
    zakat_year: r.year,
    zakat_amount: r.zakatAmountSen === null ? null : formatSen(r.zakatAmountSen),
    zakat_rate: r.rateSen === null ? null : formatSen(r.rateSen),
    zakat_dependant: r.dependants,
    exceptions: JSON.parse(r.exceptions) as string[],
    agency: r.sink,
  };
}

/** A payment as the reports show it (spec 2.3 names the first four). */
function paymentRow(p: PaymentRow): PaymentReportRow {
  return {
    fpx_seller_order_no: p.orderNo,
    created_date: formatKl(new Date(p.createdAt)),
    is_approved: p.status === 'success' ? 1 : 0,
    fpx_debit_auth_code: p.debitAuthCode ?? '',
    refNo: p.refNo,
    extraData: p.extraData,
    amount: formatSen(p.amountSen),
    addCharge: formatSen(p.addChargeSen),
    status: p.status,
    payment_method: p.paymentMethod,
    email: p.email,
    fpx_txn_id: p.fpxTxnId,
    fpx_txn_time: p.fpxTxnTime,
    agency: p.agencyCode,
    // 'checkout' (the merchant's order) or 'pay-link'; a pay-link payment names its link (issue 12).
    source: p.source,
    pay_link: p.payLink,
  };
}

/** A report's answer under the 4.2 paging rule: the rows of one page and its stats. */
interface PagedEnvelope<J> {
  status: 'OK';
  data: J[];
  stats: { total_pages: number; total_rows: number; page: number; items: number };
}

/**
 * The answer of a paged report (payment, payer history, zakat): the page at `page` of `items` rows with the
 * total, or with items=-1 every row, streamed in chunks so that a million rows never sit in memory at once.
 * A stream's total is the rows sent: each chunk is read when the client takes it, so rows made during a long
 * download are in the data, and a count taken first would not match it (nor cost a second pass).
 */
async function pagedAnswer<R, J>(
  ctx: { type: string },
  items: number,
  page: number,
  toJson: (row: R) => J,
  read: {
    all: () => AsyncIterable<R>;
    page: (limit: number, offset: number) => Promise<{ rows: R[]; total: number }>;
  },
): Promise<PagedEnvelope<J> | Readable> {
  if (items === -1) {
    // The envelope's opening, then its first piece of rows (or its closing): the store's first read done.
    const body = await primedStream(streamEnvelope(read.all(), toJson), 2);
    ctx.type = 'application/json';
    return body;
  }
  const { rows, total } = await read.page(items, page * items);
  return {
    status: 'OK',
    data: rows.map(toJson),
    stats: { total_pages: Math.ceil(total / items), total_rows: total, page, items },
  };
}

/**
 * The 2.3 envelope written row by row: the same bytes as JSON.stringify of the whole, never all of it.
 * total_rows is the number of rows written.
 */
async function* streamEnvelope<R>(
  rows: AsyncIterable<R>,
  toJson: (row: R) => unknown,
): AsyncGenerator<string> {
  yield '{"status":"OK","data":[';
  // Written in pieces of about 500 rows: one stream chunk per row costs more than the JSON itself.
  let piece: string[] = [];
  let first = true;
  let written = 0;
  for await (const row of rows) {
    written += 1;
    piece.push(JSON.stringify(toJson(row)));
    if (piece.length === 500) {
      yield `${first ? '' : ','}${piece.join(',')}`;
      first = false;
      piece = [];
      // The store reads synchronously and a loopback socket drains at once, so without a turn of the event
      // loop here the whole body would be produced in one go, every other request waiting behind it.
      await turn();
    }
  }
  if (piece.length > 0) yield `${first ? '' : ','}${piece.join(',')}`;
  yield `],"stats":${JSON.stringify({ total_pages: 1, total_rows: written, page: 0, items: -1 })}}`;
}
