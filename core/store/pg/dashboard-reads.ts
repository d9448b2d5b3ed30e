/**
 * What the merchant dashboard reads, on PostgreSQL (the SQLite twin: ../sqlite/dashboard-reads.ts). The
 * agency is a parameter of every query, so another agency's order, run or posting is not found; a page and
 * its total come from one snapshot.
 */
import { klDayStartUtc, nextDay } from '../../time.ts';
import { reconEmailJobId } from '../../queues.ts';
import { LATEST_IN_LEDGER } from '../ledger-latest.ts';
import { statement, type PgDb } from './pool.ts';
import { inSnapshot } from './snapshot-read.ts';
import { attemptLogs } from './callbacks.ts';
import { PAYMENT_DAY_COUNTS_NOW } from './orders.ts';
import { pgZakatReport } from './zakat-report.ts';
import { seekRows } from '../keyset.ts';
import type { PaymentEvent, PaymentRow } from '../orders.ts';
import type { CallbackRow } from '../callbacks.ts';
import { callbackPagePlan, callbackTotals, type AgencyCallbackCount } from '../callback-page.ts';
import type { ZakatReportRow } from '../zakat-report.ts';
import type { ReconRunRow } from '../recon-runs.ts';
import type {
  DashboardPaymentFilter,
  DashboardReadsRepository,
  DashboardRun,
  DayFigures,
  RunMail,
} from '../dashboard-reads.ts';

/** A callback is failing while it retries after a failed attempt, and when it was given up or refused. */
const FAILING = `(c.state IN ('dead', 'gone') OR (c.state = 'queued' AND c.attempts > 0))`;

const PAYMENT_COLUMNS = `order_no AS "orderNo", agency_code AS "agencyCode", ref_no AS "refNo",
  extra_data AS "extraData", payment_category AS "paymentCategory", amount_sen AS "amountSen",
  add_charge_sen AS "addChargeSen", email, return_url AS "returnUrl", payment_method AS "paymentMethod", status,
  debit_auth_code AS "debitAuthCode", fpx_txn_id AS "fpxTxnId", fpx_txn_time AS "fpxTxnTime",
  created_at AS "createdAt", updated_at AS "updatedAt", source, pay_link AS "payLink"`;

// $1 agency, $2 from, $3 to (instants), $4 approved (boolean or null), $5 order number, $6 refNo, $7 method.
const PAYMENT_WHERE = `agency_code = $1 AND created_at >= $2 AND created_at < $3
  AND ($4::boolean IS NULL OR (status = 'success') = $4)
  AND ($5::text IS NULL OR order_no = $5)
  AND ($6::text IS NULL OR ref_no = $6)
  AND ($7::text IS NULL OR payment_method = $7)`;
const PAYMENT_COUNT = statement(`SELECT count(*) AS n FROM payments WHERE ${PAYMENT_WHERE}`);
// The total from the day counts when nothing but the days, the approval and the method filters it, as
// SQLite's (decisions 240, 243): $1 agency, $2 and $3 the first and last day, $4 approved (1, 0 or null),
// $5 method (or null).
const PAYMENT_TOTAL = statement(
  `SELECT coalesce(sum(n), 0)::int AS n FROM ${PAYMENT_DAY_COUNTS_NOW}
   WHERE agency_code = $1 AND day BETWEEN $2 AND $3 AND ($4::integer IS NULL OR approved = $4)
     AND ($5::text IS NULL OR method = $5)`,
);
const PAYMENT_PAGE = statement(
  `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE ${PAYMENT_WHERE}
   ORDER BY created_at, order_no LIMIT $8 OFFSET $9`,
);
// One chunk of the export: the rows after ($8, $9) in report order, at most $10 (../keyset.ts).
const PAYMENT_SEEK = statement(
  `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE ${PAYMENT_WHERE}
     AND (created_at, order_no) > ($8::timestamptz, $9::text)
   ORDER BY created_at, order_no LIMIT $10`,
);

const POSTING_COLUMNS = `n.posting_id AS "postingId", n.sink, n.orderno, n.status, n.amount_sen AS "amountSen",
  n.name, n.email, n.data_email AS "dataEmail", n.time_utc AS "timeUtc", n.business_date AS "businessDate",
  n.zakat_name AS "zakatName", n.ic_no AS "icNo", n.phone, n.address, n.postcode, n.city, n.state,
  n.type_raw AS "typeRaw", n.type, n.year, n.zakat_amount_sen AS "zakatAmountSen", n.rate_sen AS "rateSen",
  n.dependants, n.exceptions`;

/** A posting's latest version in the agency's ledger: $1 agency, $2 first and $3 last business day. */
const LATEST = `l.sink = $1 AND l.business_date BETWEEN $2 AND $3 AND ${LATEST_IN_LEDGER}`;

/**
 * $4 code: 'any' is every posting with an exception code (the overview's link). Asked for, the flagged
 * entries are read through their own partial index (decision 249), however many the range holds in all;
 * not asked for, $4 is null.
 */
const codeFilter = (byCode: boolean) =>
  byCode ? `AND l.exceptions <> '[]' AND ($4 = 'any' OR l.exceptions::jsonb ? $4)` : 'AND $4::text IS NULL';

/** The matching ledger entries; the posting's fields are joined only to filter by $5 state or $6 type. */
const postingKeys = (byFields: boolean, byCode: boolean) => `FROM ledger_entries l
  ${byFields ? 'JOIN normalised_postings n ON n.posting_id = l.posting_id AND n.version = l.version' : ''}
  WHERE ${LATEST} ${codeFilter(byCode)}
  ${byFields ? 'AND ($5::text IS NULL OR n.state = $5) AND ($6::text IS NULL OR n.type = $6)' : ''}`;

/** Ledger-only reads take $1 to $4 and page with $5, $6; reads by the posting's fields $1 to $6, then $7, $8. */
const postingReads = (byFields: boolean, byCode: boolean) => {
  const [limit, offset] = byFields ? ['$7', '$8'] : ['$5', '$6'];
  return {
    count: statement(`SELECT count(*) AS n ${postingKeys(byFields, byCode)}`),
    page: statement(
      `WITH page AS (SELECT l.posting_id, l.version, l.business_date ${postingKeys(byFields, byCode)}
         ORDER BY l.business_date, l.posting_id LIMIT ${limit} OFFSET ${offset})
       SELECT ${POSTING_COLUMNS} FROM page
       JOIN normalised_postings n ON n.posting_id = page.posting_id AND n.version = page.version
       ORDER BY page.business_date, page.posting_id`,
    ),
  };
};
/**
 * The filtered postings pages (unfiltered, the page is the zakat report's): by code, fields, or both. By
 * code is exported so that a test can check its plan.
 */
export const POSTINGS_BY_CODE = postingReads(false, true);
const POSTINGS_BY_FIELDS = postingReads(true, false);
const POSTINGS_BY_FIELDS_AND_CODE = postingReads(true, true);
// Flagged entries only, straight from the ledger (it keeps each version's codes).
const CODES = statement(
  `SELECT DISTINCT j.code FROM ledger_entries l, jsonb_array_elements_text(l.exceptions::jsonb) AS j(code)
   WHERE ${LATEST} AND l.exceptions <> '[]' ORDER BY 1`,
);

// A day's postings per status from its stored figures (decision 251), except the days whose appended counts
// the upkeep has not folded yet (in a live deployment, today): those are read from the ledger itself. One
// statement, so one snapshot: a day not folded in it is read whole from the ledger, a day folded whole from
// its figures (ledger_day_figures are recomputed whenever its appended counts are deleted).
const LEDGER_DAYS = statement(
  `WITH unfolded AS MATERIALIZED (
     SELECT DISTINCT business_date FROM ledger_entry_day_count_deltas
     WHERE sink = $1 AND business_date BETWEEN $2 AND $3
   )
   SELECT business_date AS day, success_n AS count, success_sen AS "sumSen", pending_n AS pending,
     failed_n AS failed, flagged_n AS exceptions
   FROM ledger_day_figures
   WHERE sink = $1 AND business_date BETWEEN $2 AND $3
     AND business_date NOT IN (SELECT business_date FROM unfolded)
   UNION ALL
   SELECT l.business_date, count(*) FILTER (WHERE l.status = 'success'),
     coalesce(sum(l.amount_sen) FILTER (WHERE l.status = 'success'), 0),
     count(*) FILTER (WHERE l.status = 'pending'), count(*) FILTER (WHERE l.status = 'failed'),
     count(*) FILTER (WHERE l.exceptions <> '[]')
   FROM ledger_entries l
   WHERE l.sink = $1 AND l.business_date IN (SELECT business_date FROM unfolded) AND ${LATEST_IN_LEDGER}
   GROUP BY l.business_date`,
);
// Checkout payments per Kuala Lumpur day from the day counts (decision 251): paid, and their sen; pending
// once the bank works on them (an order nobody took to the bank is not a transaction); refused.
const PAYMENT_DAYS = statement(
  `SELECT day, coalesce(sum(n) FILTER (WHERE approved = 1), 0)::bigint AS count,
     coalesce(sum(sum_sen) FILTER (WHERE approved = 1), 0)::bigint AS "sumSen",
     sum(started_n)::bigint AS pending, sum(failed_n)::bigint AS failed
   FROM ${PAYMENT_DAY_COUNTS_NOW} WHERE agency_code = $1 AND day BETWEEN $2 AND $3 GROUP BY day`,
);
// As the callbacks page's failing tab: the given up and refused from the count rows (decision 245), the
// retrying counted live.
const CALLBACKS_FAILING = statement(
  `SELECT (SELECT coalesce(sum(n), 0) FROM callback_count_deltas
           WHERE agency_code = $1 AND state IN ('dead', 'gone'))::bigint
        + (SELECT count(*) FROM callbacks c WHERE c.state = 'queued' AND c.attempts > 0
           AND c.agency_code = $1) AS n`,
);
const OPEN_ANOMALIES = statement(
  `SELECT (SELECT count(*) FROM anomalies a JOIN bank_postings b ON b.id = a.posting_id
            WHERE a.status = 'open' AND b.agency_code = $1)
        + (SELECT count(*) FROM payment_anomalies a JOIN payments p ON p.order_no = a.order_no
            WHERE a.resolved_at IS NULL AND p.agency_code = $1) AS n`,
);

const CALLBACK_COLUMNS = `c.id, c.order_no AS "orderNo", c.agency_code AS "agencyCode", c.status, c.url, c.fields,
  c.created_at AS "createdAt", c.state, c.attempts, c.next_attempt_at AS "nextAttemptAt",
  c.finished_at AS "finishedAt"`;
// The parts of the callbacks page, as SQLite's (decision 239): $1 agency, then $2 state (null, 'failing' or
// a state) where there is one, then the limit and the offset.
const CALLBACK_PARTS = {
  failing: statement(
    // The agency's failing callbacks only, from callbacks_failing (decision 242).
    `SELECT ${CALLBACK_COLUMNS} FROM callbacks c
     WHERE ${FAILING} AND c.agency_code = $1
       AND ($2::text IS NULL OR $2 = 'failing' OR c.state = $2)
     ORDER BY c.id DESC LIMIT $3 OFFSET $4`,
  ),
  newest: statement(
    `SELECT ${CALLBACK_COLUMNS} FROM callbacks c
     WHERE c.agency_code = $1 AND NOT ${FAILING} AND ($2::text IS NULL OR c.state = $2)
     ORDER BY c.id DESC LIMIT $3 OFFSET $4`,
  ),
  inState: statement(
    `SELECT ${CALLBACK_COLUMNS} FROM callbacks c
     WHERE c.state = $2 AND NOT ${FAILING} AND c.agency_code = $1
     ORDER BY c.id DESC LIMIT $3 OFFSET $4`,
  ),
};
// The agency's settled callbacks from its count rows (decision 245: the folded ones and those appended
// since), and its queued ones, few, counted live through the state index.
const CALLBACK_COUNTS = statement(
  `SELECT state, attempted, sum(n)::bigint AS n FROM callback_count_deltas WHERE agency_code = $1
   GROUP BY 1, 2
   UNION ALL
   SELECT 'queued', attempts > 0, count(*) FROM callbacks WHERE state = 'queued' AND agency_code = $1
   GROUP BY 2`,
);

const ORDER_ROW = statement(
  `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE order_no = $2 AND agency_code = $1`,
);
const ORDER_EVENTS = statement(
  `SELECT at, status, debit_auth_code AS "debitAuthCode", source FROM payment_events WHERE order_no = $1 ORDER BY id`,
);
const ORDER_CALLBACKS = statement(
  `SELECT ${CALLBACK_COLUMNS} FROM callbacks c JOIN payments p ON p.order_no = c.order_no
   WHERE c.order_no = $1 ORDER BY c.id`,
);

// $1 agency, $2 the re-mail job id's prefix (a run's job is the prefix and its id, or those and '.n').
const RUN_COLUMNS = `r.id, r.sink, r.business_date AS "businessDate", r.trigger, r.as_of AS "asOf",
  r.started_at AS "startedAt", r.finished_at AS "finishedAt", r.fingerprint, r.file, r.file_sha256 AS "fileSha256",
  r.file_bytes AS "fileBytes", r.input_counts AS "inputCounts", r.totals, r.previous_run AS "previousRun",
  r.changes,
  (SELECT min(d.at) FROM recon_deliveries d WHERE d.run_id = r.id AND d.outcome = 'sent') AS "mailedAt",
  EXISTS (SELECT 1 FROM recon_deliveries d WHERE d.run_id = r.id) AS tried,
  EXISTS (SELECT 1 FROM outbox o WHERE o.job_id = $2::text || r.id
    OR (o.job_id >= $2 || r.id || '.' AND o.job_id < $2 || r.id || '/')) AS queued`;
const LAST_NIGHTLY = statement(
  `SELECT ${RUN_COLUMNS} FROM recon_runs r WHERE r.sink = $1 AND r.trigger = 'nightly'
   ORDER BY r.business_date DESC, r.id DESC LIMIT 1`,
);
const RUN_LIST = statement(
  `SELECT ${RUN_COLUMNS} FROM recon_runs r
   WHERE r.sink = $1 AND ($3::text IS NULL OR r.business_date >= $3) AND ($4::text IS NULL OR r.business_date <= $4)
   ORDER BY r.business_date DESC, r.id DESC LIMIT $5`,
);
const ONE_RUN = statement(`SELECT ${RUN_COLUMNS} FROM recon_runs r WHERE r.sink = $1 AND r.id = $3`);

type RawRun = Omit<ReconRunRow, 'inputCounts' | 'totals'> & {
  inputCounts: string;
  totals: string;
  mailedAt: string | null;
  tried: boolean;
  queued: boolean;
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

/**
 * The instant a KL day starts; the first day there is (0001-01-01) starts in year 0 in UTC, which a
 * timestamptz cannot hold: '-infinity' is before every instant.
 */
const startOf = (day: string) => {
  const start = klDayStartUtc(day);
  return start.startsWith('0000-') ? '-infinity' : start;
};
/** The day after `day` as the instant it starts, or 'infinity' for the last calendar day. */
const endOf = (day: string) => (day >= '9999-12-31' ? 'infinity' : klDayStartUtc(nextDay(day)));

/** Rows read per round trip when the export streams every row. */
const CHUNK = 1000;

interface DayRow {
  day: string;
  count: number;
  sumSen: number;
  pending: number;
  failed: number;
}

/** The PostgreSQL implementation of {@link DashboardReadsRepository}. */
export function pgDashboardReads(db: PgDb): DashboardReadsRepository {
  const zakat = pgZakatReport(db);
  const paymentValues = (f: DashboardPaymentFilter) => [
    f.agency,
    startOf(f.firstDay),
    endOf(f.lastDay),
    nullable(f.approved),
    nullable(f.orderNo),
    nullable(f.refNo),
    nullable(f.method),
  ];

  return {
    async overview(agency, firstDay, lastDay) {
      return inSnapshot(db, async (tx) => {
        const byDay = new Map<string, DayFigures>();
        for (let day = firstDay; day <= lastDay; day = nextDay(day)) {
          byDay.set(day, { day, collected: { count: 0, sumSen: 0 }, pending: 0, failed: 0, exceptions: 0 });
        }
        const add = (row: DayRow) => {
          const figures = byDay.get(row.day);
          if (!figures) return;
          figures.collected.count += row.count;
          figures.collected.sumSen += row.sumSen;
          figures.pending += row.pending;
          figures.failed += row.failed;
        };
        for (const row of await tx.rows<DayRow & { exceptions: number }>(LEDGER_DAYS, [
          agency,
          firstDay,
          lastDay,
        ])) {
          add(row);
          const figures = byDay.get(row.day);
          if (figures) figures.exceptions += row.exceptions;
        }
        for (const row of await tx.rows<DayRow>(PAYMENT_DAYS, [agency, firstDay, lastDay])) add(row);
        const nightly = await tx.row<RawRun>(LAST_NIGHTLY, [agency, JOB_PREFIX]);
        return {
          days: [...byDay.values()],
          callbacksFailing: (await tx.row<{ n: number }>(CALLBACKS_FAILING, [agency]))?.n ?? 0,
          openAnomalies: (await tx.row<{ n: number }>(OPEN_ANOMALIES, [agency]))?.n ?? 0,
          lastNightly: nightly ? parseRun(nightly) : null,
        };
      });
    },

    async paymentsPage(filter, limit, offset) {
      const values = paymentValues(filter);
      // Only the order number and the reference are not in the day counts.
      const counted = filter.orderNo === undefined && filter.refNo === undefined;
      const approved = filter.approved === undefined ? null : filter.approved ? 1 : 0;
      return inSnapshot(db, async (tx) => ({
        rows: await tx.rows<PaymentRow>(PAYMENT_PAGE, [...values, limit, offset]),
        total:
          (counted
            ? await tx.row<{ n: number }>(PAYMENT_TOTAL, [
                filter.agency,
                filter.firstDay,
                filter.lastDay,
                approved,
                nullable(filter.method),
              ])
            : await tx.row<{ n: number }>(PAYMENT_COUNT, values)
          )?.n ?? 0,
      }));
    },

    async *paymentRows(filter) {
      const values = paymentValues(filter);
      yield* seekRows<PaymentRow>(
        (after, limit) =>
          db.rows(PAYMENT_SEEK, [...values, after?.createdAt ?? '-infinity', after?.orderNo ?? '', limit]),
        CHUNK,
      );
    },

    async order(agency, orderNo) {
      return inSnapshot(db, async (tx) => {
        const row = await tx.row<PaymentRow>(ORDER_ROW, [agency, orderNo]);
        if (!row) return undefined;
        const found = await tx.rows<CallbackRow>(ORDER_CALLBACKS, [orderNo]);
        const logs = await attemptLogs(
          tx,
          found.map((c) => c.id),
        );
        const callbacks = found.map((c) => ({ ...c, attemptLog: logs.get(c.id) ?? [] }));
        return { ...row, events: await tx.rows<PaymentEvent>(ORDER_EVENTS, [orderNo]), callbacks };
      });
    },

    async postingsPage(filter, limit, offset) {
      const { agency, firstDay, lastDay } = filter;
      const byFields = filter.state !== undefined || filter.type !== undefined;
      const byCode = filter.code !== undefined;
      // Unfiltered, the page is the agency's zakat report, placed by the ledger's day counts (decision 248).
      if (!byFields && !byCode)
        return zakat.page({ sink: agency, start: firstDay, end: lastDay, limit, offset });
      const read = byFields ? (byCode ? POSTINGS_BY_FIELDS_AND_CODE : POSTINGS_BY_FIELDS) : POSTINGS_BY_CODE;
      const values = [agency, firstDay, lastDay, nullable(filter.code)];
      if (byFields) values.push(nullable(filter.state), nullable(filter.type));
      return inSnapshot(db, async (tx) => ({
        rows: await tx.rows<ZakatReportRow>(read.page, [...values, limit, offset]),
        total: (await tx.row<{ n: number }>(read.count, values))?.n ?? 0,
      }));
    },

    async postingCodes({ agency, firstDay, lastDay }) {
      return (await db.rows<{ code: string }>(CODES, [agency, firstDay, lastDay])).map((row) => row.code);
    },

    async callbacksPage(filter, limit, offset) {
      const { agency } = filter;
      const state = filter.state ?? null;
      return inSnapshot(db, async (tx) => {
        const counts = await tx.rows<AgencyCallbackCount>(CALLBACK_COUNTS, [agency]);
        const { byState, total, failingOfFilter } = callbackTotals(counts, filter.state);
        const plan = callbackPagePlan(filter.state, failingOfFilter, limit, offset);
        const parts: { row: CallbackRow; failing: boolean }[] = [];
        // Each part as planned, in page order; all three take the agency, the state, the limit, the offset.
        for (const part of ['failing', 'newest', 'inState'] as const) {
          const read = plan[part];
          if (!read) continue;
          const values = [agency, state, read.limit, read.offset];
          for (const row of await tx.rows<CallbackRow>(CALLBACK_PARTS[part], values))
            parts.push({ row, failing: part === 'failing' });
        }
        // The page's attempts in one round trip, not one query per callback.
        const logs = await attemptLogs(
          tx,
          parts.map((p) => p.row.id),
        );
        const rows = parts.map(({ row, failing }) => ({
          ...row,
          failing,
          attemptLog: logs.get(row.id) ?? [],
        }));
        return { rows, total, byState };
      });
    },

    async runs(agency, filter) {
      const rows = await db.rows<RawRun>(RUN_LIST, [
        agency,
        JOB_PREFIX,
        nullable(filter.firstDay),
        nullable(filter.lastDay),
        filter.limit,
      ]);
      return rows.map(parseRun);
    },

    async run(agency, id) {
      const row = await db.row<RawRun>(ONE_RUN, [agency, JOB_PREFIX, id]);
      return row && parseRun(row);
    },
  };
}
