/**
 * The payment report's reads on PostgreSQL (the SQLite twin: ../sqlite/payment-report.ts): pages from the
 * per-day counts within one snapshot, every row streamed by keyset, 1,000 at a time (../keyset.ts).
 */
import { klDayStartUtc, nextDay } from '../../time.ts';
import { statement, type PgDb, type Queryable } from './pool.ts';
import { inSnapshot } from './snapshot-read.ts';
import { PAYMENT_DAY_COUNTS_NOW } from './orders.ts';
import { mergedInOrder, payerBefore, paymentBefore, seekRows } from '../keyset.ts';
import { placePage, type DayCount } from '../day-pages.ts';
import type { PaymentEvent, PaymentRow } from '../orders.ts';
import type { FoundPayment, PaymentFilter, PaymentReportRepository } from '../payment-report.ts';

const COLUMNS = `order_no AS "orderNo", agency_code AS "agencyCode", ref_no AS "refNo", extra_data AS "extraData",
  payment_category AS "paymentCategory", amount_sen AS "amountSen", add_charge_sen AS "addChargeSen", email,
  return_url AS "returnUrl", payment_method AS "paymentMethod", status, debit_auth_code AS "debitAuthCode",
  fpx_txn_id AS "fpxTxnId", fpx_txn_time AS "fpxTxnTime", created_at AS "createdAt", updated_at AS "updatedAt",
  source, pay_link AS "payLink"`;

// $1 agencies (one or several), $2 from, $3 to (instants), $4 approved (boolean or null), $5 order number.
const FILTERS = `created_at >= $2 AND created_at < $3 AND ($4::boolean IS NULL OR (status = 'success') = $4)
  AND ($5::text IS NULL OR order_no = $5)`;
const WHERE = `WHERE agency_code = ANY($1::text[]) AND ${FILTERS}`;
const COUNT = statement(`SELECT count(*) AS n FROM payments ${WHERE}`);
const PAGE = statement(
  `SELECT ${COLUMNS} FROM payments ${WHERE} ORDER BY created_at, order_no LIMIT $6 OFFSET $7`,
);
// One chunk of the streamed report: one agency's ($1) rows after ($6, $7) in report order, at most $8, read
// in order from the agency's index and stopped at the limit (with `= ANY`, every remaining row of the range
// was read and sorted for each chunk). Instants are stored to the millisecond: the key read back is exact.
const SEEK = statement(
  `SELECT ${COLUMNS} FROM payments WHERE agency_code = $1::text AND ${FILTERS}
     AND (created_at, order_no) > ($6::timestamptz, $7::text)
   ORDER BY created_at, order_no LIMIT $8`,
);
// $1 agencies, $2 first day, $3 last day, $4 approved.
const DAY_COUNTS = statement(
  `SELECT day, sum(n) AS n FROM ${PAYMENT_DAY_COUNTS_NOW}
   WHERE agency_code = ANY($1::text[]) AND day >= $2 AND day <= $3 AND ($4::boolean IS NULL OR approved = $4::int)
   GROUP BY day HAVING sum(n) <> 0 ORDER BY day`,
);
const EVENTS = statement(
  `SELECT order_no AS "orderNo", at, status, debit_auth_code AS "debitAuthCode", source FROM payment_events
   WHERE order_no = ANY($1::text[]) ORDER BY id`,
);
const BY_ORDER_NO = statement(`SELECT ${COLUMNS}, extras FROM payments WHERE order_no = $1`);
const BY_REF = statement(
  `SELECT ${COLUMNS}, extras FROM payments WHERE agency_code = ANY($1::text[]) AND ref_no = $2`,
);
// The payer history, newest first (decision 247): $1 the address, $2 the agencies. Each agency's payments
// of an address are one range of the email index (migration 028), in this order.
const EMAIL_COUNT = statement(
  `SELECT count(*) AS n FROM payments WHERE email = $1 AND agency_code = ANY($2::text[])`,
);
const EMAIL_PAGE = statement(
  `SELECT ${COLUMNS} FROM payments WHERE email = $1 AND agency_code = ANY($2::text[])
   ORDER BY created_at DESC, order_no LIMIT $3 OFFSET $4`,
);
// One agency's ($2) chunk after ($3, $4) in that order; the bound on created_at alone starts the index scan
// at the last row's instant.
const EMAIL_SEEK = statement(
  `SELECT ${COLUMNS} FROM payments WHERE email = $1 AND agency_code = $2::text
     AND created_at <= $3::timestamptz AND (created_at < $3::timestamptz OR order_no > $4::text)
   ORDER BY created_at DESC, order_no LIMIT $5`,
);

/** Rows read per round trip when every row is streamed. */
const CHUNK = 1000;
/** The end of the last day there is: 'infinity' is after every instant. */
const END_OF_TIME = 'infinity';

/**
 * The instant a KL day starts, as PostgreSQL reads it. The first day there is (0001-01-01, a report's
 * default start) starts in year 0 in UTC, which a timestamptz cannot hold: '-infinity' is before every
 * instant, as SQLite's string comparison puts that start.
 */
const dayStart = (day: string): string => {
  const start = klDayStartUtc(day);
  return start.startsWith('0000-') ? '-infinity' : start;
};

/** The instant that ends a KL day ('infinity' for the last day there is, which has no next day). */
const dayEnd = (day: string): string => (day >= '9999-12-31' ? END_OF_TIME : klDayStartUtc(nextDay(day)));

function bind(f: PaymentFilter) {
  const agencies = typeof f.agency === 'string' ? [f.agency] : [...new Set(f.agency)];
  return {
    agencies,
    from: dayStart(f.firstDay),
    to: dayEnd(f.lastDay),
    approved: f.isApproved ?? null,
    sellerOrderNo: f.sellerOrderNo ?? null,
  };
}

type Bound = ReturnType<typeof bind>;
const whereValues = (p: Bound, from = p.from, to = p.to) => [
  p.agencies,
  from,
  to,
  p.approved,
  p.sellerOrderNo,
];

async function dayCounts(q: Queryable, f: PaymentFilter, p: Bound) {
  return q.rows<DayCount>(DAY_COUNTS, [p.agencies, f.firstDay, f.lastDay, p.approved]);
}

/** The payment report's reads over payments (checkout orders and pay-link payments). */
export function pgPaymentReport(db: PgDb): PaymentReportRepository {
  return {
    /**
     * One page of the agencies' payments. The total and the page's first day come from the per-day counts,
     * so only rows of the page's own first day are skipped by OFFSET; one snapshot for both.
     */
    async page(filter, limit, offset) {
      const p = bind(filter);
      return inSnapshot(db, async (tx) => {
        if (p.sellerOrderNo !== null) {
          const rows = await tx.rows<PaymentRow>(PAGE, [...whereValues(p), limit, offset]);
          return { rows, total: (await tx.row<{ n: number }>(COUNT, whereValues(p)))?.n ?? 0 };
        }
        const { total, place } = placePage(await dayCounts(tx, filter, p), offset, limit);
        if (!place) return { rows: [], total };
        // The read stops at the end of the last day the page reaches: the sort never sees the rest.
        const to = place.lastDay === undefined ? p.to : dayEnd(place.lastDay);
        const rows = await tx.rows<PaymentRow>(PAGE, [
          ...whereValues(p, dayStart(place.day), to),
          limit,
          place.skip,
        ]);
        return { rows, total };
      });
    },

    /**
     * Every matching payment, in report order, 1,000 at a time by keyset (../keyset.ts); several agencies
     * each through its own index range, merged.
     */
    async *all(filter) {
      const p = bind(filter);
      const [, ...where] = whereValues(p);
      const seekAll = (agency: string) =>
        seekRows<PaymentRow>(
          (after, limit) =>
            db.rows(SEEK, [agency, ...where, after?.createdAt ?? '-infinity', after?.orderNo ?? '', limit]),
          CHUNK,
        );
      yield* p.agencies.length === 1
        ? seekAll(p.agencies[0]!)
        : mergedInOrder(p.agencies.map(seekAll), paymentBefore);
    },

    async find(agencies, key) {
      type Found = PaymentRow & { extras: string | null };
      // By order number (the primary key), or by refNo within the agencies (their index): never a scan.
      const rows =
        key.orderNo !== undefined
          ? (await db.rows<Found>(BY_ORDER_NO, [key.orderNo])).filter((row) =>
              agencies.includes(row.agencyCode),
            )
          : (await db.rows<Found>(BY_REF, [[...agencies], key.refNo ?? ''])).sort(
              (a, b) =>
                Number(b.source === 'checkout') - Number(a.source === 'checkout') ||
                Number(b.status === 'success') - Number(a.status === 'success') ||
                b.createdAt.localeCompare(a.createdAt) ||
                a.orderNo.localeCompare(b.orderNo),
            );
      if (rows.length === 0) return [];
      const events = await db.rows<PaymentEvent & { orderNo: string }>(EVENTS, [rows.map((r) => r.orderNo)]);
      return rows.map((row): FoundPayment => ({
        ...row,
        events: events.filter((e) => e.orderNo === row.orderNo).map(({ orderNo: _o, ...event }) => event),
      }));
    },

    async byEmail(email, agencies, limit, offset) {
      const values = [email.trim().toLowerCase(), [...new Set(agencies)]];
      return inSnapshot(db, async (tx) => ({
        rows: await tx.rows<PaymentRow>(EMAIL_PAGE, [...values, limit, offset]),
        total: (await tx.row<{ n: number }>(EMAIL_COUNT, values))?.n ?? 0,
      }));
    },

    /** Every payment of the payer in those agencies, newest first, by keyset and merged as all() is. */
    async *allByEmail(email, agencies) {
      const address = email.trim().toLowerCase();
      const seekAgency = (agency: string) =>
        seekRows<PaymentRow>(
          (after, limit) =>
            db.rows(EMAIL_SEEK, [
              address,
              agency,
              after?.createdAt ?? END_OF_TIME,
              after?.orderNo ?? '',
              limit,
            ]),
          CHUNK,
        );
      yield* mergedInOrder([...new Set(agencies)].map(seekAgency), payerBefore);
    },
  };
}
