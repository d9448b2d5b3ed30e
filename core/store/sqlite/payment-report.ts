import { klDayStartUtc, nextDay } from '../../time.ts';
import type { Db } from './db.ts';
import { mergedInOrder, payerBefore, paymentBefore, seekRows } from '../keyset.ts';
import { placePage } from '../day-pages.ts';
import type { PaymentEvent, PaymentRow } from '../orders.ts';
import type { FoundPayment, PaymentFilter, PaymentReportRepository } from '../payment-report.ts';

const COLUMNS = `order_no AS orderNo, agency_code AS agencyCode, ref_no AS refNo, extra_data AS extraData,
  payment_category AS paymentCategory, amount_sen AS amountSen, add_charge_sen AS addChargeSen, email,
  return_url AS returnUrl, payment_method AS paymentMethod, status, debit_auth_code AS debitAuthCode,
  fpx_txn_id AS fpxTxnId, fpx_txn_time AS fpxTxnTime, created_at AS createdAt, updated_at AS updatedAt,
  source, pay_link AS payLink`;

const FILTER = `created_at >= @from AND created_at < @to
  AND (@approved IS NULL OR (status = 'success') = @approved)
  AND (@sellerOrderNo IS NULL OR order_no = @sellerOrderNo)`;
const WHERE = `WHERE agency_code = @agency AND ${FILTER}`;
/** Several agencies (a JSON array of codes): each read through the agency index, then sorted together. */
const WHERE_ANY = `WHERE agency_code IN (SELECT value FROM json_each(@agencies)) AND ${FILTER}`;

const CHUNK = 1000;

/** The report's statements, exported so that the benchmark runs the very same SQL raw. */
export const PAYMENT_COUNT_SQL = `SELECT count(*) AS n FROM payments ${WHERE}`;
export const PAYMENT_PAGE_SQL = `SELECT ${COLUMNS} FROM payments ${WHERE}
  ORDER BY created_at, order_no LIMIT @limit OFFSET @offset`;
/** The rows after a known (created_at, order_no) key: the cheapest way to read rows in report order. */
export const PAYMENT_SEEK_SQL = `SELECT ${COLUMNS} FROM payments ${WHERE}
  AND (created_at > @afterCreated OR (created_at = @afterCreated AND order_no > @afterOrder))
  ORDER BY created_at, order_no LIMIT @limit`;
const PAYMENT_COUNT_ANY_SQL = `SELECT count(*) AS n FROM payments ${WHERE_ANY}`;
const PAYMENT_PAGE_ANY_SQL = `SELECT ${COLUMNS} FROM payments ${WHERE_ANY}
  ORDER BY created_at, order_no LIMIT @limit OFFSET @offset`;

/** The instant that ends a KL day. '~' sorts after every stored instant: the last day has no next day. */
const dayEnd = (day: string): string => (day >= '9999-12-31' ? '~' : klDayStartUtc(nextDay(day)));

/** The payment report's reads over payments (checkout orders and pay-link payments). */
export function sqlitePaymentReport(db: Db): PaymentReportRepository {
  const agenciesOf = (f: PaymentFilter) =>
    typeof f.agency === 'string' ? [f.agency] : [...new Set(f.agency)];
  const params = (f: PaymentFilter, agencies = agenciesOf(f)) => ({
    agency: agencies[0] ?? '',
    agencies: JSON.stringify(agencies),
    firstDay: f.firstDay,
    lastDay: f.lastDay,
    from: klDayStartUtc(f.firstDay),
    to: dayEnd(f.lastDay),
    approved: f.isApproved === undefined ? null : f.isApproved ? 1 : 0,
    sellerOrderNo: f.sellerOrderNo ?? null,
  });
  const count = db.prepare<ReturnType<typeof params>, { n: number }>(PAYMENT_COUNT_SQL);
  const page = db.prepare<ReturnType<typeof params> & { limit: number; offset: number }, PaymentRow>(
    PAYMENT_PAGE_SQL,
  );
  const dayCountsSql = (agency: string) => `SELECT day, sum(n) AS n FROM payment_day_counts
     WHERE ${agency} AND day >= @firstDay AND day <= @lastDay
       AND (@approved IS NULL OR approved = @approved)
     GROUP BY day ORDER BY day`;
  const dayCounts = db.prepare<ReturnType<typeof params>, { day: string; n: number }>(
    dayCountsSql('agency_code = @agency'),
  );
  const countAny = db.prepare<ReturnType<typeof params>, { n: number }>(PAYMENT_COUNT_ANY_SQL);
  const pageAny = db.prepare<ReturnType<typeof params> & { limit: number; offset: number }, PaymentRow>(
    PAYMENT_PAGE_ANY_SQL,
  );
  const dayCountsAny = db.prepare<ReturnType<typeof params>, { day: string; n: number }>(
    dayCountsSql('agency_code IN (SELECT value FROM json_each(@agencies))'),
  );
  const seek = db.prepare<
    ReturnType<typeof params> & { afterCreated: string; afterOrder: string; limit: number },
    PaymentRow
  >(PAYMENT_SEEK_SQL);
  /** One agency's matching rows in report order, fetched 1,000 at a time by keyset. */
  const seekAll = (p: ReturnType<typeof params>) =>
    seekRows<PaymentRow>(
      (after, limit) =>
        seek.all({ ...p, afterCreated: after?.createdAt ?? '', afterOrder: after?.orderNo ?? '', limit }),
      CHUNK,
    );
  // The payer history, newest first: each agency's payments of the address are one range of the email index
  // (migration 027), in this order. Several agencies' pages are sorted together: at most the address's rows.
  type ByEmail = { email: string; agency: string; agencies: string };
  const emailCount = db.prepare<ByEmail, { n: number }>(
    `SELECT count(*) AS n FROM payments
     WHERE email = @email AND agency_code IN (SELECT value FROM json_each(@agencies))`,
  );
  const emailPage = db.prepare<ByEmail & { limit: number; offset: number }, PaymentRow>(
    `SELECT ${COLUMNS} FROM payments WHERE email = @email AND agency_code = @agency
     ORDER BY created_at DESC, order_no LIMIT @limit OFFSET @offset`,
  );
  const emailPageAny = db.prepare<ByEmail & { limit: number; offset: number }, PaymentRow>(
    `SELECT ${COLUMNS} FROM payments
     WHERE email = @email AND agency_code IN (SELECT value FROM json_each(@agencies))
     ORDER BY created_at DESC, order_no LIMIT @limit OFFSET @offset`,
  );
  // The bound on created_at alone first, so the read starts inside the index range at the last row's instant.
  const emailSeek = db.prepare<
    ByEmail & { afterCreated: string; afterOrder: string; limit: number },
    PaymentRow
  >(
    `SELECT ${COLUMNS} FROM payments WHERE email = @email AND agency_code = @agency
       AND created_at <= @afterCreated AND (created_at < @afterCreated OR order_no > @afterOrder)
     ORDER BY created_at DESC, order_no LIMIT @limit`,
  );
  const byEmailParams = (email: string, agencies: readonly string[]): ByEmail => ({
    email: email.trim().toLowerCase(),
    agency: agencies[0] ?? '',
    agencies: JSON.stringify([...new Set(agencies)]),
  });
  return {
    /**
     * One page of the agencies' payments. The total and the page's first day come from the per-day counts
     * (migration 005), so only rows of the page's own first day are skipped by OFFSET: a deep page costs
     * about what the first one does. One read transaction: one snapshot for both.
     */
    async page(
      filter: PaymentFilter,
      limit: number,
      offset: number,
    ): Promise<{ rows: PaymentRow[]; total: number }> {
      const agencies = agenciesOf(filter);
      const p = params(filter, agencies);
      const several = agencies.length > 1;
      const read = several
        ? { page: pageAny, count: countAny, days: dayCountsAny }
        : { page, count, days: dayCounts };
      return db.transaction(() => {
        if (p.sellerOrderNo !== null) {
          return { rows: read.page.all({ ...p, limit, offset }), total: read.count.get(p)?.n ?? 0 };
        }
        const { total, place } = placePage(read.days.all(p), offset, limit);
        if (!place) return { rows: [], total };
        // Several agencies' rows are sorted together: the read stops at the end of the last day the page
        // reaches, so the sort sees those days' rows, never the rest of the range.
        const to = several && place.lastDay !== undefined ? dayEnd(place.lastDay) : p.to;
        return {
          rows: read.page.all({ ...p, from: klDayStartUtc(place.day), to, limit, offset: place.skip }),
          total,
        };
      })();
    },

    /**
     * Every matching payment, in report order, fetched 1,000 at a time by keyset: memory stays flat and the
     * connection is never held between chunks (better-sqlite3 cannot run other statements mid-iteration).
     * Several agencies are read each through its own index range and merged: one query over all of them
     * would sort every remaining row for each chunk.
     */
    async *all(filter: PaymentFilter): AsyncGenerator<PaymentRow> {
      const agencies = agenciesOf(filter);
      if (agencies.length === 1) yield* seekAll(params(filter, agencies));
      else
        yield* mergedInOrder(
          agencies.map((agency) => seekAll(params(filter, [agency]))),
          paymentBefore,
        );
    },

    /**
     * Orders of the agencies, by order number or refNo, with their events and signed pay-link extras. A
     * refNo is the merchant's order first (unique per agency); pay-link payments share their link's refNo,
     * and follow, paid ones first, newest first.
     */
    async find(
      agencies: readonly string[],
      key: { orderNo?: string; refNo?: string },
    ): Promise<FoundPayment[]> {
      type Found = PaymentRow & { extras: string | null };
      // By order number (the primary key), or by refNo within each agency (its index): never a scan.
      const rows =
        key.orderNo !== undefined
          ? db
              .prepare<[string], Found>(`SELECT ${COLUMNS}, extras FROM payments WHERE order_no = ?`)
              .all(key.orderNo)
              .filter((row) => agencies.includes(row.agencyCode))
          : agencies
              .flatMap((agency) =>
                db
                  .prepare<[string, string], Found>(
                    `SELECT ${COLUMNS}, extras FROM payments WHERE agency_code = ? AND ref_no = ?`,
                  )
                  .all(agency, key.refNo ?? ''),
              )
              .sort(
                (a, b) =>
                  Number(b.source === 'checkout') - Number(a.source === 'checkout') ||
                  Number(b.status === 'success') - Number(a.status === 'success') ||
                  b.createdAt.localeCompare(a.createdAt) ||
                  a.orderNo.localeCompare(b.orderNo),
              );
      return rows.map((row) => ({
        ...row,
        events: db
          .prepare<[string], PaymentEvent>(
            'SELECT at, status, debit_auth_code AS debitAuthCode, source FROM payment_events WHERE order_no = ? ORDER BY id',
          )
          .all(row.orderNo),
      }));
    },

    /**
     * A page of a payer's payments within the given agencies, newest first, and their total. Only those
     * agencies are read (the email index holds the agency), as on PostgreSQL: another agency's payments
     * under the address are not looked at.
     */
    async byEmail(
      email: string,
      agencies: readonly string[],
      limit: number,
      offset: number,
    ): Promise<{ rows: PaymentRow[]; total: number }> {
      const p = byEmailParams(email, agencies);
      const read = new Set(agencies).size > 1 ? emailPageAny : emailPage;
      return db.transaction(() => ({
        rows: read.all({ ...p, limit, offset }),
        total: emailCount.get(p)?.n ?? 0,
      }))();
    },

    /** Every payment of the payer in those agencies, newest first, by keyset and merged as all() is. */
    async *allByEmail(email: string, agencies: readonly string[]): AsyncGenerator<PaymentRow> {
      const seekAgency = (agency: string) => {
        const p = byEmailParams(email, [agency]);
        // '~' sorts after every stored instant: the first chunk starts at the newest payment.
        return seekRows<PaymentRow>(
          (after, limit) =>
            emailSeek.all({
              ...p,
              afterCreated: after?.createdAt ?? '~',
              afterOrder: after?.orderNo ?? '',
              limit,
            }),
          CHUNK,
        );
      };
      yield* mergedInOrder([...new Set(agencies)].map(seekAgency), payerBefore);
    },
  };
}
