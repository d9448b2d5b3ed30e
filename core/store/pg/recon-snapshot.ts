/**
 * A reconciliation day as of an instant on PostgreSQL (the SQLite twin: ../sqlite/recon-snapshot.ts).
 * `open` begins one REPEATABLE READ, READ ONLY transaction (one snapshot, as SQLite's one read
 * transaction) and the sections stream from it until `close()` (decision 228). The SQL is SQLite's, row for
 * row and in the same order, so the workbook is byte-identical.
 */
import { TEST_SINK } from '../ledger.ts';
import { businessDate, klDayStartUtc, nextDay } from '../../time.ts';
import { NOT_ACQUIRER_SOURCES } from '../payment-event-sources.ts';
import type { PoolClient, QueryResultRow } from 'pg';
import { checkOut, type PgDb } from './pool.ts';
import { mergedInOrder } from '../keyset.ts';
import type {
  ReconAnomaly,
  ReconItem,
  ReconMovement,
  ReconReadiness,
  ReconSnapshot,
  ReconSnapshotRepository,
} from '../recon-snapshot.ts';
import { checkoutPendingSince } from '../recon-snapshot.ts';

// The statements name their parameters (as SQLite's do); `named` numbers those each one uses. 'at' is the
// start of the day or the as-of time, for the pending sections.
const P = {
  sink: '@sink',
  agency: '@agency',
  day: '@day',
  start: '@start',
  end: '@end',
  asOf: '@asOf',
  at: '@at',
  lookback: '@lookback',
} as const;
type Params = Record<keyof typeof P, string | null>;

/** An `@name` statement as PostgreSQL text with $1.. in the order names first appear, and its values. */
function named(sql: string, params: Params): { text: string; values: unknown[] } {
  const order: (keyof typeof P)[] = [];
  const text = sql.replace(/@([a-zA-Z]+)/g, (_, name: keyof typeof P) => {
    if (!(name in P)) throw new Error(`unknown parameter @${name}`);
    if (!order.includes(name)) order.push(name);
    return `$${order.indexOf(name) + 1}`;
  });
  return { text, values: order.map((name) => params[name]) };
}

// data.email is read from the posting's record as received (trimmed and lower-cased as the normaliser
// compares it; an empty string is absent), as SQLite's json_extract reads it. PostgreSQL's JSON functions
// refuse a record holding \u0000 anywhere (a NUL in a payer's name), so that escape is read as \u0001
// first: the e-mail rule admits neither, and the other fields are not read here.
const BANK_ITEM_COLUMNS = `n.orderno AS "orderNo", 'bank' AS channel, bp.time_utc AS "timeUtc",
  l.business_date AS "businessDate", n.name, n.email,
  nullif(lower(trim(replace(bp.record, '\\u0000', '\\u0001')::json #>> '{data,email}')), '') AS "dataEmail",
  n.zakat_name AS "zakatName", n.ic_no AS "icNo", n.phone, n.address, n.postcode, n.city,
  n.type_raw AS "typeRaw", n.state, n.year, n.amount_sen AS "amountSen", n.zakat_amount_sen AS "zakatAmountSen",
  0 AS "addChargeSen", n.rate_sen AS "rateSen", n.dependants, n.status, n.exceptions, l.version`;
const ACQUIRER_VERSION = `(SELECT count(*) FROM payment_events x WHERE x.order_no = p.order_no
  AND x.source NOT IN ${NOT_ACQUIRER_SOURCES} AND x.id <= e.id)`;
const CHECKOUT_ITEM_COLUMNS = `p.order_no AS "orderNo", p.payment_method AS channel, p.created_at AS "timeUtc",
  NULL::text AS name, p.email, NULL::text AS "dataEmail", NULL::text AS "zakatName", NULL::text AS "icNo",
  NULL::text AS phone, NULL::text AS address, NULL::text AS postcode, NULL::text AS city,
  p.payment_category AS "typeRaw", NULL::text AS state, NULL::text AS year, p.amount_sen AS "amountSen",
  NULL::bigint AS "zakatAmountSen", p.add_charge_sen AS "addChargeSen", NULL::bigint AS "rateSen",
  NULL::integer AS dependants, e.status, '[]' AS exceptions, ${ACQUIRER_VERSION} AS version`;
/** The posting's latest ledger version received before `at`. */
const LATEST_AT = (at: string) => `NOT EXISTS (SELECT 1 FROM ledger_entries l2 WHERE l2.sink = l.sink
  AND l2.posting_id = l.posting_id AND l2.version > l.version AND l2.received_at < ${at})`;
/** The payment's latest acquirer event before `at` (the order's own 'checkout' event is not one). */
const LATEST_EVENT_AT = (at: string) => `(SELECT max(x.id) FROM payment_events x WHERE x.order_no = p.order_no
  AND x.source NOT IN ${NOT_ACQUIRER_SOURCES} AND x.at < ${at})`;

const BANK_FROM = `FROM ledger_entries l JOIN normalised_postings n ON n.posting_id = l.posting_id
  AND n.version = l.version JOIN bank_postings bp ON bp.id = l.posting_id`;

const READINESS = `WITH batches AS (SELECT id, accepted, updated FROM webhook_batches
    WHERE business_date >= ${P.day} AND received_at >= ${P.start} AND received_at < ${P.asOf})
  SELECT
    (SELECT coalesce(sum(accepted + updated), 0) FROM batches) AS received,
    (SELECT count(*) FROM normalised_postings n JOIN batches b ON b.id = n.batch_id) AS normalised,
    (SELECT count(*) FROM normalised_postings n JOIN batches b ON b.id = n.batch_id
       WHERE n.sink = ${P.sink}) AS "forSink",
    (SELECT count(*) FROM normalised_postings n JOIN batches b ON b.id = n.batch_id
       JOIN ledger_entries l ON l.sink = n.sink AND l.posting_id = n.posting_id AND l.version = n.version
       WHERE n.sink = ${P.sink}) AS ledgered`;

const bankTransactions = (flaggedOnly: boolean) => `SELECT ${BANK_ITEM_COLUMNS} ${BANK_FROM}
  WHERE l.sink = ${P.sink} AND l.business_date = ${P.day} AND l.received_at < ${P.asOf} AND ${LATEST_AT(P.asOf)}
    ${flaggedOnly ? "AND l.exceptions <> '[]'" : ''}
  ORDER BY bp.time_utc, n.orderno`;
const BANK_PENDING = `SELECT ${BANK_ITEM_COLUMNS} ${BANK_FROM}
  WHERE l.sink = ${P.sink} AND l.status = 'pending' AND l.received_at < ${P.at} AND l.business_date <= ${P.day}
    AND ${LATEST_AT(P.at)}
  ORDER BY bp.time_utc, n.orderno`;
/** Checkout payments the acquirer had reported on (an order never paid is not a transaction). */
const checkoutItems = (where: string, latestEvent: string) => `SELECT ${CHECKOUT_ITEM_COLUMNS}
  FROM payments p JOIN payment_events e ON e.id = ${latestEvent}
  WHERE p.agency_code = ${P.agency} AND ${where}
  ORDER BY p.created_at, p.order_no`;
const CHECKOUT_TRANSACTIONS = checkoutItems(
  `p.created_at >= ${P.start} AND p.created_at < ${P.end}`,
  LATEST_EVENT_AT(P.asOf),
);
const CHECKOUT_PENDING = checkoutItems(
  `p.created_at >= ${P.lookback} AND p.created_at < ${P.end}`,
  LATEST_EVENT_AT(P.at),
);

const BANK_MOVEMENT_COLUMNS = `n.orderno AS "orderNo", 'bank' AS channel, l.business_date AS "businessDate",
  l.received_at AS "receivedAt", l.version, pb.status AS "beforeStatus", pb.amount_sen AS "beforeAmountSen",
  l.status, l.amount_sen AS "amountSen"`;
const bankMovements = (adjustmentsOnly: boolean) => `SELECT ${BANK_MOVEMENT_COLUMNS}
  FROM ledger_entries l
  JOIN normalised_postings n ON n.posting_id = l.posting_id AND n.version = l.version
  LEFT JOIN ledger_entries pb ON pb.sink = l.sink AND pb.posting_id = l.posting_id
    AND pb.version = (SELECT max(x.version) FROM ledger_entries x WHERE x.sink = l.sink
      AND x.posting_id = l.posting_id AND x.received_at < ${P.start})
  WHERE l.sink = ${P.sink} AND l.received_at >= ${P.start} AND l.received_at < ${P.asOf}
    AND l.business_date <= ${P.day} AND ${LATEST_AT(P.asOf)}
    ${adjustmentsOnly ? `AND l.is_adjustment = 1 AND l.business_date < ${P.day}` : ''}
  ORDER BY l.business_date, n.orderno, l.version`;
const CHECKOUT_MOVEMENT_COLUMNS = `p.order_no AS "orderNo", p.payment_method AS channel,
  p.created_at AS "createdAt", e.at AS "receivedAt", ${ACQUIRER_VERSION} AS version,
  eb.status AS "beforeStatus", CASE WHEN eb.id IS NULL THEN NULL ELSE p.amount_sen END AS "beforeAmountSen",
  e.status, p.amount_sen AS "amountSen"`;
const checkoutMovements = (adjustmentsOnly: boolean) => `SELECT ${CHECKOUT_MOVEMENT_COLUMNS}
  FROM payment_events e JOIN payments p ON p.order_no = e.order_no
  LEFT JOIN payment_events eb ON eb.id = ${LATEST_EVENT_AT(P.start)}
  WHERE e.source NOT IN ${NOT_ACQUIRER_SOURCES} AND e.at >= ${P.start} AND e.at < ${P.asOf}
    AND p.agency_code = ${P.agency} AND p.created_at < ${adjustmentsOnly ? P.start : P.end}
    AND e.id = ${LATEST_EVENT_AT(P.asOf)}
  ORDER BY p.created_at, p.order_no`;
const BANK_VERSIONS = `SELECT ${BANK_MOVEMENT_COLUMNS}
  FROM ledger_entries l
  JOIN normalised_postings n ON n.posting_id = l.posting_id AND n.version = l.version
  LEFT JOIN ledger_entries pb ON pb.sink = l.sink AND pb.posting_id = l.posting_id
    AND pb.version = (SELECT max(x.version) FROM ledger_entries x WHERE x.sink = l.sink
      AND x.posting_id = l.posting_id AND x.version < l.version)
  WHERE l.sink = ${P.sink} AND l.received_at >= ${P.start} AND l.received_at < ${P.asOf}
    AND l.business_date <= ${P.day}
  ORDER BY l.business_date, n.orderno, l.version`;
const CHECKOUT_VERSIONS = `SELECT ${CHECKOUT_MOVEMENT_COLUMNS}
  FROM payment_events e JOIN payments p ON p.order_no = e.order_no
  LEFT JOIN payment_events eb ON eb.id = (SELECT max(x.id) FROM payment_events x
    WHERE x.order_no = p.order_no AND x.source NOT IN ${NOT_ACQUIRER_SOURCES} AND x.id < e.id)
  WHERE e.source NOT IN ${NOT_ACQUIRER_SOURCES} AND e.at >= ${P.start} AND e.at < ${P.asOf}
    AND p.agency_code = ${P.agency} AND p.created_at < ${P.end}
  ORDER BY p.created_at, p.order_no, e.id`;
const BANK_ANOMALIES = `SELECT a.orderno AS "orderNo", 'bank' AS channel, a.first_seen_at AS "seenAt", a.reason,
    a.stored_record AS stored, a.incoming_record AS incoming
  FROM anomalies a JOIN bank_postings p ON p.id = a.posting_id
  WHERE (CASE WHEN p.route = 'test' OR p.agency_code IS NULL THEN '${TEST_SINK}' ELSE p.agency_code END) = ${P.sink}
    AND a.first_seen_at >= ${P.start} AND a.first_seen_at < ${P.asOf}
  ORDER BY a.first_seen_at, a.orderno, a.incoming_sha256`;
const CHECKOUT_ANOMALIES = `SELECT a.order_no AS "orderNo", coalesce(p.payment_method, 'fpx') AS channel,
    a.seen_at AS "seenAt", 'acquirer result after a final status (' || a.source || ')' AS reason,
    a.stored_status AS stored, a.incoming_code AS incoming
  FROM payment_anomalies a JOIN payments p ON p.order_no = a.order_no
  WHERE p.agency_code = ${P.agency} AND a.seen_at >= ${P.start} AND a.seen_at < ${P.asOf}
  ORDER BY a.seen_at, a.order_no, a.id`;

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const before = (a: ReconItem, b: ReconItem): boolean =>
  a.timeUtc < b.timeUtc || (a.timeUtc === b.timeUtc && a.orderNo < b.orderNo);

/** A checkout row's business date is its creation's (in Kuala Lumpur). */
const withDay = <T extends { timeUtc: string }>(row: T): T => ({
  ...row,
  businessDate: businessDate(new Date(row.timeUtc)),
});
const createdOn = <T extends { createdAt: string }>({ createdAt, ...row }: T) => ({
  ...row,
  businessDate: businessDate(new Date(createdAt)),
});

async function* mapped<T, U>(rows: AsyncIterable<T>, fn: (row: T) => U | undefined): AsyncGenerator<U> {
  for await (const row of rows) {
    const out = fn(row);
    if (out !== undefined) yield out;
  }
}

/** A stream of no rows. */
async function* nothing<R>(): AsyncGenerator<R> {}

/** Rows fetched per round trip while a section is read. */
const CHUNK = 1000;

/**
 * Opens each snapshot as one REPEATABLE READ, READ ONLY transaction on a connection of its own, held until
 * `close()`: every section read from it sees the same instant (decision 228).
 */
export function pgReconSnapshot(db: PgDb): ReconSnapshotRepository {
  return {
    async open(sink, day, asOf) {
      const { client, release } = await checkOut(db.pool);
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      } catch (err) {
        release(true);
        throw err;
      }
      const snapshot = new PgReconSnapshot(client, release, sink, day, asOf.toISOString());
      try {
        await snapshot.readFirst();
        return snapshot;
      } catch (err) {
        await snapshot.close();
        throw err;
      }
    },
  };
}

/**
 * A snapshot (../recon-snapshot.ts) streaming each section from its transaction: the rows come 1,000 at a
 * time through a cursor of the transaction's own (DECLARE ... CURSOR), so memory stays flat however large
 * the day, and several sections may be read at once (a merge of bank and checkout rows reads two). The
 * SQL is SQLite's, row for row and in the same order, so the workbook is byte-identical.
 */
class PgReconSnapshot implements ReconSnapshot {
  readonly agency: string | null;
  private readonly params: Params;
  private cursors = 0;
  private ready: ReconReadiness | undefined;
  private anomalyRows: ReconAnomaly[] = [];
  private closed = false;

  constructor(
    private readonly client: PoolClient,
    private readonly release: (broken?: boolean) => void,
    readonly sink: string,
    readonly day: string,
    readonly asOf: string,
  ) {
    this.agency = sink === TEST_SINK ? null : sink;
    const end = klDayStartUtc(nextDay(day));
    this.params = {
      sink,
      agency: this.agency,
      day,
      start: klDayStartUtc(day),
      end,
      asOf,
      at: asOf,
      lookback: checkoutPendingSince(end),
    };
  }

  /** The small sections, read at once: the readiness and the anomalies. */
  async readFirst(): Promise<void> {
    this.ready = (await this.all<ReconReadiness>(READINESS))[0]!;
    const bank = await this.all<ReconAnomaly>(BANK_ANOMALIES);
    this.anomalyRows =
      this.agency === null
        ? bank
        : [...bank, ...(await this.all<ReconAnomaly>(CHECKOUT_ANOMALIES))].sort(
            (a, b) => compare(a.seenAt, b.seenAt) || compare(a.orderNo, b.orderNo),
          );
  }

  private async all<R>(sql: string, at = this.asOf): Promise<R[]> {
    const { text, values } = named(sql, { ...this.params, at });
    return (await this.open().query<R & QueryResultRow>(text, values)).rows;
  }

  /** The snapshot's connection; once closed it is the pool's again, and a section read then is refused. */
  private open(): PoolClient {
    if (this.closed) throw new Error('the reconciliation snapshot is closed');
    return this.client;
  }

  /** Every row of `sql`, CHUNK at a time through a cursor of this transaction. */
  private async *rows<R>(sql: string, at = this.asOf): AsyncGenerator<R> {
    const { text, values } = named(sql, { ...this.params, at });
    this.cursors += 1;
    const cursor = `recon_section_${this.cursors}`;
    await this.open().query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${text}`, values);
    let done = false;
    try {
      for (;;) {
        const { rows } = await this.open().query(`FETCH ${CHUNK} FROM ${cursor}`);
        yield* rows as Awaited<R>[];
        if (rows.length < CHUNK) break;
      }
      done = true;
    } finally {
      // A reader that stopped early closes its cursor; a failed transaction is rolled back by close().
      if (!done && !this.closed) await this.client.query(`CLOSE ${cursor}`).catch(() => undefined);
    }
  }

  /** Checkout rows: none for the live-test sink, which has no checkout payments. */
  private checkout<R>(sql: string, at = this.asOf): AsyncGenerator<R> {
    return this.agency === null ? nothing<R>() : this.rows<R>(sql, at);
  }

  async readiness(): Promise<ReconReadiness> {
    return this.ready!;
  }

  async *transactions(options: { flaggedOnly?: boolean } = {}): AsyncGenerator<ReconItem> {
    // Checkout payments carry no exception codes.
    if (options.flaggedOnly) {
      yield* this.rows<ReconItem>(bankTransactions(true));
      return;
    }
    yield* mergedInOrder(
      [
        this.rows<ReconItem>(bankTransactions(false)),
        mapped(this.checkout<ReconItem>(CHECKOUT_TRANSACTIONS), withDay),
      ],
      before,
    );
  }

  async *pending(at: 'opening' | 'closing'): AsyncGenerator<ReconItem> {
    const instant = at === 'opening' ? this.params.start! : this.asOf;
    yield* mergedInOrder(
      [
        this.rows<ReconItem>(BANK_PENDING, instant),
        mapped(this.checkout<ReconItem>(CHECKOUT_PENDING, instant), (row) =>
          row.status === 'pending' ? withDay(row) : undefined,
        ),
      ],
      before,
    );
  }

  async *movements(options: { adjustmentsOnly?: boolean } = {}): AsyncGenerator<ReconMovement> {
    const adjustmentsOnly = options.adjustmentsOnly === true;
    yield* this.rows<ReconMovement>(bankMovements(adjustmentsOnly));
    yield* mapped(
      this.checkout<ReconMovement & { createdAt: string }>(checkoutMovements(adjustmentsOnly)),
      createdOn,
    );
  }

  async *versions(): AsyncGenerator<ReconMovement> {
    yield* this.rows<ReconMovement>(BANK_VERSIONS);
    yield* mapped(this.checkout<ReconMovement & { createdAt: string }>(CHECKOUT_VERSIONS), createdOn);
  }

  async anomalies(): Promise<ReconAnomaly[]> {
    return [...this.anomalyRows];
  }

  /** Ends the transaction and hands the connection back (one that cannot end it is closed instead). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    let broken = false;
    await this.client.query('ROLLBACK').catch(() => (broken = true));
    this.release(broken);
  }
}
