/**
 * The merchant dashboard's reads on SQLite. Over 350 lines on purpose: every query of the dashboard's pages
 * shares the column lists and the one tenancy predicate (the agency in every WHERE) defined here, and keeping
 * them in one file is what lets a reviewer check that no page reads across agencies.
 */
import { klDayStartUtc, nextDay } from '../../time.ts';
import { reconEmailJobId } from '../../queues.ts';
import type { Db } from './db.ts';
import { seekRows, type PaymentKey } from '../keyset.ts';
import { NO_LATER_IN_LEDGER } from '../ledger-latest.ts';
import type { PaymentEvent, PaymentRow } from '../orders.ts';
import type { CallbackAttempt, CallbackRow } from '../callbacks.ts';
import { callbackPagePlan, callbackTotals, type AgencyCallbackCount } from '../callback-page.ts';
import type { ZakatReportRow } from '../zakat-report.ts';
import { sqliteZakatReport } from './zakat-report.ts';
import type { ReconRunRow } from '../recon-runs.ts';
import type {
  DashboardPaymentFilter,
  DashboardPostingFilter,
  DashboardReadsRepository,
  DashboardRun,
  DayFigures,
  RunMail,
} from '../dashboard-reads.ts';

/** A callback is failing while it retries after a failed attempt, and when it was given up or refused. */
const FAILING = `(c.state IN ('dead', 'gone') OR (c.state = 'queued' AND c.attempts > 0))`;

const CALLBACK_COLUMNS = `c.id, c.order_no AS orderNo, c.agency_code AS agencyCode, c.status, c.url, c.fields,
  c.created_at AS createdAt, c.state, c.attempts, c.next_attempt_at AS nextAttemptAt, c.finished_at AS finishedAt`;

/**
 * The parts of the dashboard's callbacks page (decision 239), each newest first at its own offset, each
 * through the index named, never a sort of the agency's history: the failing callbacks of the filter (@state:
 * null, 'failing' or a state) from the state index (the callbacks not finished or given up, of every agency,
 * are few); the rest of every callback or of the delivered ones from the agency's own range; and the rest of
 * the 'queued' filter (not attempted yet) or the superseded ones, also few, from the state index again.
 * Exported for the plan test.
 */
export const CALLBACK_PAGE_SQL = {
  // The agency's failing callbacks only (decision 242): never another agency's dead ones.
  failing: `SELECT ${CALLBACK_COLUMNS}, 1 AS failing FROM callbacks c INDEXED BY callbacks_failing
    WHERE ${FAILING} AND c.agency_code = @agency
      AND (@state IS NULL OR @state = 'failing' OR c.state = @state)
    ORDER BY c.id DESC LIMIT @limit OFFSET @offset`,
  newest: `SELECT ${CALLBACK_COLUMNS}, 0 AS failing FROM callbacks c INDEXED BY callbacks_by_agency
    WHERE c.agency_code = @agency AND NOT ${FAILING} AND (@state IS NULL OR c.state = @state)
    ORDER BY c.id DESC LIMIT @limit OFFSET @offset`,
  inState: `SELECT ${CALLBACK_COLUMNS}, 0 AS failing FROM callbacks c INDEXED BY callbacks_by_state
    WHERE c.state = @state AND NOT ${FAILING} AND c.agency_code = @agency
    ORDER BY c.id DESC LIMIT @limit OFFSET @offset`,
};

const PAYMENT_COLUMNS = `order_no AS orderNo, agency_code AS agencyCode, ref_no AS refNo, extra_data AS extraData,
  payment_category AS paymentCategory, amount_sen AS amountSen, add_charge_sen AS addChargeSen, email,
  return_url AS returnUrl, payment_method AS paymentMethod, status, debit_auth_code AS debitAuthCode,
  fpx_txn_id AS fpxTxnId, fpx_txn_time AS fpxTxnTime, created_at AS createdAt, updated_at AS updatedAt,
  source, pay_link AS payLink`;

const PAYMENT_WHERE = `agency_code = @agency AND created_at >= @from AND created_at < @to
  AND (@approved IS NULL OR (status = 'success') = @approved)
  AND (@orderNo IS NULL OR order_no = @orderNo)
  AND (@refNo IS NULL OR ref_no = @refNo)
  AND (@method IS NULL OR payment_method = @method)`;

/**
 * The payments page's total from the day counts the payment report keeps (decision 240), when nothing but the
 * days, the approval and the method filters it (decision 243): a page over a year costs what a page over a
 * day does. Exported for the plan test.
 */
export const PAYMENT_TOTAL_SQL = `SELECT coalesce(sum(n), 0) AS n FROM payment_day_counts
  WHERE agency_code = @agency AND day BETWEEN @firstDay AND @lastDay AND (@approved IS NULL OR approved = @approved)
    AND (@method IS NULL OR method = @method)`;

const POSTING_COLUMNS = `n.posting_id AS postingId, n.sink, n.orderno, n.status, n.amount_sen AS amountSen, n.name,
  n.email, n.data_email AS dataEmail, n.time_utc AS timeUtc, n.business_date AS businessDate,
  n.zakat_name AS zakatName, n.ic_no AS icNo, n.phone, n.address, n.postcode, n.city, n.state,
  n.type_raw AS typeRaw, n.type, n.year, n.zakat_amount_sen AS zakatAmountSen, n.rate_sen AS rateSen,
  n.dependants, n.exceptions`;

/** A posting's latest version in the agency's ledger (through the ledger's day index and primary key). */
const LATEST = `l.sink = @agency AND l.business_date BETWEEN @firstDay AND @lastDay AND ${NO_LATER_IN_LEDGER}`;

/**
 * code 'any': every posting with an exception code (the overview's link). Asked for, the flagged entries
 * are read through their own partial index (decision 249), however many the range holds in all.
 */
const codeFilter = (byCode: boolean) =>
  byCode
    ? `AND l.exceptions <> '[]'
       AND (@code = 'any' OR EXISTS (SELECT 1 FROM json_each(l.exceptions) WHERE value = @code))`
    : 'AND @code IS NULL';

/**
 * The matching ledger entries. The posting's fields are joined only to filter by state or type: the ledger
 * alone answers the count and the page's keys otherwise, and only the page's 50 postings are read.
 */
const postingKeys = (byFields: boolean, byCode: boolean) => `FROM ledger_entries l
  ${byFields ? 'JOIN normalised_postings n ON n.posting_id = l.posting_id AND n.version = l.version' : ''}
  WHERE ${LATEST} ${codeFilter(byCode)}
  ${byFields ? 'AND (@state IS NULL OR n.state = @state) AND (@type IS NULL OR n.type = @type)' : ''}`;

/** The count of the postings filtered by code alone: exported so that a test can check its plan. */
export const FLAGGED_POSTINGS_COUNT_SQL = `SELECT count(*) AS n ${postingKeys(false, true)}`;

const RUN_COLUMNS = `r.id, r.sink, r.business_date AS businessDate, r.trigger, r.as_of AS asOf,
  r.started_at AS startedAt, r.finished_at AS finishedAt, r.fingerprint, r.file, r.file_sha256 AS fileSha256,
  r.file_bytes AS fileBytes, r.input_counts AS inputCounts, r.totals, r.previous_run AS previousRun, r.changes,
  (SELECT min(d.at) FROM recon_deliveries d WHERE d.run_id = r.id AND d.outcome = 'sent') AS mailedAt,
  EXISTS (SELECT 1 FROM recon_deliveries d WHERE d.run_id = r.id) AS tried,
  EXISTS (SELECT 1 FROM outbox o WHERE o.job_id = @jobPrefix || r.id
    OR (o.job_id >= @jobPrefix || r.id || '.' AND o.job_id < @jobPrefix || r.id || '/')) AS queued`;

type RawRun = Omit<ReconRunRow, 'inputCounts' | 'totals'> & {
  inputCounts: string;
  totals: string;
  mailedAt: string | null;
  tried: number;
  queued: number;
};

const JOB_PREFIX = reconEmailJobId(0).slice(0, -1);

function parseRun({ tried, queued, ...row }: RawRun): DashboardRun {
  const mail: RunMail = row.mailedAt ? 'sent' : tried ? 'failed' : queued ? 'queued' : 'not-mailed';
  return {
    ...row,
    inputCounts: JSON.parse(row.inputCounts) as Record<string, number>,
    totals: JSON.parse(row.totals) as unknown,
    mail,
  };
}

const nullable = <T>(value: T | undefined): T | null => value ?? null;

/** The day after `day` as the instant it starts, or past every stored instant for the last calendar day. */
const endOf = (day: string) => (day >= '9999-12-31' ? '~' : klDayStartUtc(nextDay(day)));

/** Rows fetched per query when the export streams every row. */
export const EXPORT_CHUNK = 1000;

/**
 * The SQLite reads, and the one statement behind the exports' stream: the matching payments after a key, so
 * that the stream's chunks can be read on the dashboard's read threads (decision 244) one by one.
 */
export type SqliteDashboardReads = DashboardReadsRepository & {
  paymentsAfter(
    filter: DashboardPaymentFilter,
    after: PaymentKey | undefined,
    limit: number,
  ): Promise<PaymentRow[]>;
};

/** The SQLite implementation of {@link DashboardReadsRepository}. */
export function sqliteDashboardReads(db: Db): SqliteDashboardReads {
  const zakat = sqliteZakatReport(db);
  const paymentParams = (f: DashboardPaymentFilter) => ({
    agency: f.agency,
    from: klDayStartUtc(f.firstDay),
    to: endOf(f.lastDay),
    approved: f.approved === undefined ? null : f.approved ? 1 : 0,
    orderNo: nullable(f.orderNo),
    refNo: nullable(f.refNo),
    method: nullable(f.method),
  });
  type PaymentParams = ReturnType<typeof paymentParams>;
  const paymentCount = db.prepare<PaymentParams, { n: number }>(
    `SELECT count(*) AS n FROM payments WHERE ${PAYMENT_WHERE}`,
  );
  const paymentTotal = db.prepare<
    { agency: string; firstDay: string; lastDay: string; approved: number | null; method: string | null },
    { n: number }
  >(PAYMENT_TOTAL_SQL);
  const paymentPage = db.prepare<PaymentParams & { limit: number; offset: number }, PaymentRow>(
    `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE ${PAYMENT_WHERE}
     ORDER BY created_at, order_no LIMIT @limit OFFSET @offset`,
  );
  const paymentSeek = db.prepare<
    PaymentParams & { afterCreated: string; afterOrder: string; limit: number },
    PaymentRow
  >(
    `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE ${PAYMENT_WHERE}
       AND (created_at > @afterCreated OR (created_at = @afterCreated AND order_no > @afterOrder))
     ORDER BY created_at, order_no LIMIT @limit`,
  );

  // Bank postings per day from the ledger's day figures (latest versions), checkout payments per UTC+8 day
  // of creation from their day counts, both kept by triggers (decision 251); a pending payment counts once
  // the acquirer was involved (an order nobody took to the bank is not a transaction).
  const ledgerDays = db.prepare<
    { agency: string; firstDay: string; lastDay: string },
    { day: string; count: number; sumSen: number; pending: number; failed: number; exceptions: number }
  >(
    `SELECT business_date AS day, success_n AS count, success_sen AS sumSen, pending_n AS pending,
       failed_n AS failed, flagged_n AS exceptions
     FROM ledger_day_counts WHERE sink = @agency AND business_date BETWEEN @firstDay AND @lastDay`,
  );
  const paymentDays = db.prepare<
    { agency: string; firstDay: string; lastDay: string },
    { day: string; count: number; sumSen: number; pending: number; failed: number }
  >(
    `SELECT day, sum(CASE WHEN approved = 1 THEN n ELSE 0 END) AS count,
       sum(CASE WHEN approved = 1 THEN sum_sen ELSE 0 END) AS sumSen, sum(started_n) AS pending,
       sum(failed_n) AS failed
     FROM payment_day_counts WHERE agency_code = @agency AND day BETWEEN @firstDay AND @lastDay
     GROUP BY day`,
  );
  // From the agency's callback counts (decision 239), not a count of its callbacks.
  const callbacksFailing = db.prepare<{ agency: string }, { n: number }>(
    `SELECT coalesce(sum(n), 0) AS n FROM callback_counts
     WHERE agency_code = @agency AND (state IN ('dead', 'gone') OR (state = 'queued' AND attempted = 1))`,
  );
  const openAnomalies = db.prepare<{ agency: string }, { n: number }>(
    `SELECT (SELECT count(*) FROM anomalies a JOIN bank_postings b ON b.id = a.posting_id
              WHERE a.status = 'open' AND b.agency_code = @agency)
          + (SELECT count(*) FROM payment_anomalies a JOIN payments p ON p.order_no = a.order_no
              WHERE a.resolved_at IS NULL AND p.agency_code = @agency) AS n`,
  );
  const lastNightly = db.prepare<{ agency: string; jobPrefix: string }, RawRun>(
    `SELECT ${RUN_COLUMNS} FROM recon_runs r WHERE r.sink = @agency AND r.trigger = 'nightly'
     ORDER BY r.business_date DESC, r.id DESC LIMIT 1`,
  );

  const postingParams = (f: DashboardPostingFilter) => ({
    agency: f.agency,
    firstDay: f.firstDay,
    lastDay: f.lastDay,
    code: nullable(f.code),
    state: nullable(f.state),
    type: nullable(f.type),
  });
  type PostingParams = ReturnType<typeof postingParams>;
  const postingReads = (byFields: boolean, byCode: boolean) => {
    const keys = postingKeys(byFields, byCode);
    return {
      count: db.prepare<PostingParams, { n: number }>(`SELECT count(*) AS n ${keys}`),
      page: db.prepare<PostingParams & { limit: number; offset: number }, ZakatReportRow>(
        `WITH page AS (SELECT l.posting_id, l.version, l.business_date ${keys}
           ORDER BY l.business_date, l.posting_id LIMIT @limit OFFSET @offset)
         SELECT ${POSTING_COLUMNS} FROM page
         JOIN normalised_postings n ON n.posting_id = page.posting_id AND n.version = page.version
         ORDER BY page.business_date, page.posting_id`,
      ),
    };
  };
  // The filtered pages (unfiltered, the page is the zakat report's): by code, by fields, or both.
  const postingsByCode = postingReads(false, true);
  const postingsByFields = postingReads(true, false);
  const postingsByFieldsAndCode = postingReads(true, true);
  // Flagged entries only, straight from the ledger (it keeps each version's codes): no posting row is read.
  const codes = db.prepare<{ agency: string; firstDay: string; lastDay: string }, { code: string }>(
    `SELECT DISTINCT j.value AS code FROM ledger_entries l, json_each(l.exceptions) j
     WHERE ${LATEST} AND l.exceptions <> '[]'
     ORDER BY 1`,
  );

  type PageRow = CallbackRow & { failing: number };
  type PartParams = { agency: string; state: string | null; limit: number; offset: number };
  const callbackParts = {
    failing: db.prepare<PartParams, PageRow>(CALLBACK_PAGE_SQL.failing),
    newest: db.prepare<PartParams, PageRow>(CALLBACK_PAGE_SQL.newest),
    inState: db.prepare<PartParams, PageRow>(CALLBACK_PAGE_SQL.inState),
  };

  const callbackCounts = db.prepare<{ agency: string }, AgencyCallbackCount>(
    'SELECT state, attempted, n FROM callback_counts WHERE agency_code = @agency',
  );
  const attempts = db.prepare<[number], CallbackAttempt>(
    `SELECT at, status_code AS statusCode, latency_ms AS latencyMs, error, response_prefix AS responsePrefix
     FROM callback_attempts WHERE callback_id = ? ORDER BY id`,
  );

  const orderRow = db.prepare<{ agency: string; orderNo: string }, PaymentRow>(
    `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE order_no = @orderNo AND agency_code = @agency`,
  );
  const orderEvents = db.prepare<[string], PaymentEvent>(
    'SELECT at, status, debit_auth_code AS debitAuthCode, source FROM payment_events WHERE order_no = ? ORDER BY id',
  );
  const orderCallbacks = db.prepare<[string], CallbackRow>(
    `SELECT c.id, c.order_no AS orderNo, p.agency_code AS agencyCode, c.status, c.url, c.fields,
       c.created_at AS createdAt, c.state, c.attempts, c.next_attempt_at AS nextAttemptAt, c.finished_at AS finishedAt
     FROM callbacks c JOIN payments p ON p.order_no = c.order_no WHERE c.order_no = ? ORDER BY c.id`,
  );

  const runList = db.prepare<
    { agency: string; jobPrefix: string; firstDay: string | null; lastDay: string | null; limit: number },
    RawRun
  >(
    `SELECT ${RUN_COLUMNS} FROM recon_runs r
     WHERE r.sink = @agency AND (@firstDay IS NULL OR r.business_date >= @firstDay)
       AND (@lastDay IS NULL OR r.business_date <= @lastDay)
     ORDER BY r.business_date DESC, r.id DESC LIMIT @limit`,
  );
  const oneRun = db.prepare<{ agency: string; jobPrefix: string; id: number }, RawRun>(
    `SELECT ${RUN_COLUMNS} FROM recon_runs r WHERE r.id = @id AND r.sink = @agency`,
  );

  const paymentsAfter: SqliteDashboardReads['paymentsAfter'] = async (filter, after, limit) =>
    paymentSeek.all({
      ...paymentParams(filter),
      afterCreated: after?.createdAt ?? '',
      afterOrder: after?.orderNo ?? '',
      limit,
    });

  return {
    async overview(agency, firstDay, lastDay) {
      return db.transaction(() => {
        const byDay = new Map<string, DayFigures>();
        for (let day = firstDay; day <= lastDay; day = nextDay(day)) {
          byDay.set(day, { day, collected: { count: 0, sumSen: 0 }, pending: 0, failed: 0, exceptions: 0 });
        }
        const add = (row: {
          day: string;
          count: number;
          sumSen: number;
          pending: number;
          failed: number;
        }) => {
          const figures = byDay.get(row.day);
          if (!figures) return;
          figures.collected.count += row.count;
          figures.collected.sumSen += row.sumSen;
          figures.pending += row.pending;
          figures.failed += row.failed;
        };
        for (const row of ledgerDays.all({ agency, firstDay, lastDay })) {
          add(row);
          const figures = byDay.get(row.day);
          if (figures) figures.exceptions += row.exceptions;
        }
        for (const row of paymentDays.all({ agency, firstDay, lastDay })) add(row);
        const nightly = lastNightly.get({ agency, jobPrefix: JOB_PREFIX });
        return {
          days: [...byDay.values()],
          callbacksFailing: callbacksFailing.get({ agency })?.n ?? 0,
          openAnomalies: openAnomalies.get({ agency })?.n ?? 0,
          lastNightly: nightly ? parseRun(nightly) : null,
        };
      })();
    },

    async paymentsPage(filter, limit, offset) {
      const p = paymentParams(filter);
      const { agency, firstDay, lastDay } = filter;
      // Only the order number and the reference are not in the day counts (the method is: decision 243).
      const counted = p.orderNo === null && p.refNo === null;
      return db.transaction(() => ({
        rows: paymentPage.all({ ...p, limit, offset }),
        total:
          (counted
            ? paymentTotal.get({ agency, firstDay, lastDay, approved: p.approved, method: p.method })
            : paymentCount.get(p)
          )?.n ?? 0,
      }))();
    },

    paymentsAfter,

    async *paymentRows(filter) {
      yield* seekRows<PaymentRow>((after, limit) => paymentsAfter(filter, after, limit), EXPORT_CHUNK);
    },

    async order(agency, orderNo) {
      return db.transaction(() => {
        const row = orderRow.get({ agency, orderNo });
        if (!row) return undefined;
        return {
          ...row,
          events: orderEvents.all(orderNo),
          callbacks: orderCallbacks.all(orderNo).map((c) => ({ ...c, attemptLog: attempts.all(c.id) })),
        };
      })();
    },

    async postingsPage(filter, limit, offset) {
      const p = postingParams(filter);
      const byFields = p.state !== null || p.type !== null;
      const byCode = p.code !== null;
      // Unfiltered, the page is the agency's zakat report: its total and the day the page starts on come
      // from the ledger's day counts (decisions 234, 240, 248), so a deep page costs what the first does.
      if (!byFields && !byCode)
        return zakat.page({ sink: p.agency, start: p.firstDay, end: p.lastDay, limit, offset });
      const read = byFields ? (byCode ? postingsByFieldsAndCode : postingsByFields) : postingsByCode;
      return db.transaction(() => ({
        rows: read.page.all({ ...p, limit, offset }),
        total: read.count.get(p)?.n ?? 0,
      }))();
    },

    async postingCodes({ agency, firstDay, lastDay }) {
      return codes.all({ agency, firstDay, lastDay }).map((row) => row.code);
    },

    async callbacksPage(filter, limit, offset) {
      const { agency } = filter;
      const state = filter.state ?? null;
      return db.transaction(() => {
        const { byState, total, failingOfFilter } = callbackTotals(
          callbackCounts.all({ agency }),
          filter.state,
        );
        const plan = callbackPagePlan(filter.state, failingOfFilter, limit, offset);
        // Each part as planned, in page order.
        const rows = (['failing', 'newest', 'inState'] as const).flatMap((part) => {
          const read = plan[part];
          return read ? callbackParts[part].all({ agency, state, ...read }) : [];
        });
        return {
          rows: rows.map((row) => ({ ...row, failing: row.failing === 1, attemptLog: attempts.all(row.id) })),
          total,
          byState,
        };
      })();
    },

    async runs(agency, filter) {
      return runList
        .all({
          agency,
          jobPrefix: JOB_PREFIX,
          firstDay: nullable(filter.firstDay),
          lastDay: nullable(filter.lastDay),
          limit: filter.limit,
        })
        .map(parseRun);
    },

    async run(agency, id) {
      const row = oneRun.get({ agency, jobPrefix: JOB_PREFIX, id });
      return row && parseRun(row);
    },
  };
}
