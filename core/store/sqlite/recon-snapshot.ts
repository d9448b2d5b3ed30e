import Database from 'better-sqlite3';
import { TEST_SINK } from '../ledger.ts';
import { LOCK_WAIT_MS } from '../outage.ts';
import { businessDate, klDayStartUtc, nextDay } from '../../time.ts';
import { NOT_ACQUIRER_SOURCES } from '../payment-event-sources.ts';
import type {
  ReconAnomaly,
  ReconItem,
  ReconMovement,
  ReconReadiness,
  ReconSnapshot,
  ReconSnapshotRepository,
} from '../recon-snapshot.ts';
import { checkoutPendingSince } from '../recon-snapshot.ts';

// A posting's time is its first version's (a settlement's new time does not move it in the list).
// data.email is not a column of normalised_postings: it is read from the posting's record as received
// (trimmed and lower-cased as the normaliser compares it; an empty string is absent). Any version's record
// will do: a new version may change only status and time, so the current one is read (no history lookup).
const BANK_ITEM_COLUMNS = `n.orderno AS orderNo, 'bank' AS channel, bp.time_utc AS timeUtc,
  l.business_date AS businessDate, n.name, n.email,
  nullif(lower(trim(json_extract(bp.record, '$.data.email'))), '') AS dataEmail,
  n.zakat_name AS zakatName, n.ic_no AS icNo, n.phone, n.address, n.postcode, n.city,
  n.type_raw AS typeRaw, n.state, n.year, n.amount_sen AS amountSen, n.zakat_amount_sen AS zakatAmountSen,
  0 AS addChargeSen, n.rate_sen AS rateSen, n.dependants, n.status, n.exceptions, l.version`;
const CHECKOUT_ITEM_COLUMNS = `p.order_no AS orderNo, p.payment_method AS channel, p.created_at AS timeUtc,
  NULL AS name, p.email, NULL AS dataEmail, NULL AS zakatName, NULL AS icNo, NULL AS phone, NULL AS address,
  NULL AS postcode, NULL AS city, p.payment_category AS typeRaw, NULL AS state, NULL AS year,
  p.amount_sen AS amountSen, NULL AS zakatAmountSen, p.add_charge_sen AS addChargeSen,
  NULL AS rateSen, NULL AS dependants, e.status, '[]' AS exceptions, (SELECT count(*) FROM payment_events x WHERE x.order_no = p.order_no
    AND x.source NOT IN ${NOT_ACQUIRER_SOURCES} AND x.id <= e.id) AS version`;
/** The posting's latest ledger version received before @at. */
const LATEST_AT = (at: string) => `NOT EXISTS (SELECT 1 FROM ledger_entries l2 WHERE l2.sink = l.sink
  AND l2.posting_id = l.posting_id AND l2.version > l.version AND +l2.received_at < ${at})`;
/** The payment's latest acquirer event before @at (the order's own 'checkout' event is not one). */
const LATEST_EVENT_AT = (at: string) => `(SELECT max(x.id) FROM payment_events x WHERE x.order_no = p.order_no
  AND x.source NOT IN ${NOT_ACQUIRER_SOURCES} AND x.at < ${at})`;

/** Opens each snapshot on a read-only connection of its own to the database file. */
export function sqliteReconSnapshot(file: string): ReconSnapshotRepository {
  return {
    async open(sink: string, day: string, asOf: Date): Promise<ReconSnapshot> {
      return new SqliteReconSnapshot(file, sink, day, asOf.toISOString());
    },
  };
}

/**
 * A snapshot (core/store/recon-snapshot.ts) on its own read-only connection in one read transaction (one
 * WAL snapshot), so the workbook can be streamed over many event-loop turns while the web process keeps
 * writing. Its sections read rows one at a time.
 */
class SqliteReconSnapshot implements ReconSnapshot {
  private readonly db: Database.Database;
  readonly agency: string | null;
  /** Start of the business day, and of the day after (UTC instants). */
  readonly start: string;
  readonly end: string;

  constructor(
    file: string,
    readonly sink: string,
    readonly day: string,
    readonly asOf: string,
  ) {
    this.db = new Database(file, { readonly: true, fileMustExist: true });
    this.db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
    this.db.exec('BEGIN');
    this.agency = sink === TEST_SINK ? null : sink;
    this.start = klDayStartUtc(day);
    this.end = klDayStartUtc(nextDay(day));
    // The first read fixes the snapshot.
    this.db.prepare('SELECT count(*) FROM schema_migrations').get();
  }

  private get params() {
    return {
      sink: this.sink,
      agency: this.agency,
      day: this.day,
      start: this.start,
      end: this.end,
      asOf: this.asOf,
    };
  }

  /** Whether the pipeline has ledgered every version received from the start of the day until as-of. */
  private readinessNow(): ReconReadiness {
    return this.db
      .prepare<Record<string, unknown>, ReconReadiness>(
        `WITH batches AS (SELECT id, accepted, updated FROM webhook_batches
           WHERE business_date >= @day AND received_at >= @start AND received_at < @asOf)
         SELECT
           (SELECT coalesce(sum(accepted + updated), 0) FROM batches) AS received,
           (SELECT count(*) FROM normalised_postings n JOIN batches b ON b.id = n.batch_id) AS normalised,
           (SELECT count(*) FROM normalised_postings n JOIN batches b ON b.id = n.batch_id
              WHERE n.sink = @sink) AS forSink,
           (SELECT count(*) FROM normalised_postings n JOIN batches b ON b.id = n.batch_id
              JOIN ledger_entries l ON l.sink = n.sink AND l.posting_id = n.posting_id AND l.version = n.version
              WHERE n.sink = @sink) AS ledgered`,
      )
      .get(this.params)!;
  }

  /** Every posting and checkout payment of the business day, at its latest state as of as-of. */
  private *transactionRows(options: { flaggedOnly?: boolean }): Generator<ReconItem> {
    // Checkout rows first: one connection runs one statement at a time while the bank rows stream.
    // (Checkout payments carry no exception codes.)
    const rows = options.flaggedOnly
      ? []
      : this.checkoutRows(
          `p.created_at >= @start AND p.created_at < @end`,
          LATEST_EVENT_AT('@asOf'),
          this.params,
        );
    const bank = this.db
      .prepare<Record<string, unknown>, ReconItem>(
        `SELECT ${BANK_ITEM_COLUMNS}
         FROM ledger_entries l JOIN normalised_postings n ON n.posting_id = l.posting_id AND n.version = l.version
         JOIN bank_postings bp ON bp.id = l.posting_id
         WHERE l.sink = @sink AND l.business_date = @day AND +l.received_at < @asOf AND ${LATEST_AT('@asOf')}
           ${options.flaggedOnly ? "AND l.exceptions <> '[]'" : ''}
         ORDER BY bp.time_utc, n.orderno`,
      )
      .iterate(this.params);
    yield* mergeByTime(bank, rows);
  }

  /** Records of this day or earlier pending at the day's start (`opening`) or at as-of (`closing`). */
  private *pendingRows(at: 'opening' | 'closing'): Generator<ReconItem> {
    const params = { ...this.params, at: at === 'opening' ? this.start : this.asOf };
    const rows = this.checkoutRows(
      `p.created_at >= @lookback AND p.created_at < @end`,
      LATEST_EVENT_AT('@at'),
      {
        ...params,
        lookback: checkoutPendingSince(this.end),
      },
    ).filter((row) => row.status === 'pending');
    const bank = this.db
      .prepare<Record<string, unknown>, ReconItem>(
        `SELECT ${BANK_ITEM_COLUMNS}
         FROM ledger_entries l JOIN normalised_postings n ON n.posting_id = l.posting_id AND n.version = l.version
         JOIN bank_postings bp ON bp.id = l.posting_id
         WHERE l.sink = @sink AND l.status = 'pending' AND l.received_at < @at AND l.business_date <= @day
           AND ${LATEST_AT('@at')}
         ORDER BY bp.time_utc, n.orderno`,
      )
      .iterate(params);
    yield* mergeByTime(bank, rows);
  }

  /** Checkout payments the acquirer had reported on (an order never paid is not a transaction). */
  private checkoutRows(where: string, latestEvent: string, params: Record<string, unknown>): ReconItem[] {
    if (this.agency === null) return [];
    return this.db
      .prepare<Record<string, unknown>, ReconItem>(
        `SELECT ${CHECKOUT_ITEM_COLUMNS}, '' AS businessDate
         FROM payments p JOIN payment_events e ON e.id = ${latestEvent}
         WHERE p.agency_code = @agency AND ${where}
         ORDER BY p.created_at, p.order_no`,
      )
      .all(params)
      .map((row) => ({ ...row, businessDate: businessDate(new Date(row.timeUtc)) }));
  }

  /**
   * Every record of this day or earlier that changed from the start of the day until as-of, with its
   * state before the day and at as-of. `adjustmentsOnly`: only records of earlier days.
   */
  private *movementRows(options: { adjustmentsOnly?: boolean }): Generator<ReconMovement> {
    const params = this.params;
    // (A unary + keeps SQLite from walking the sink's whole received-time index for a single posting:
    // the primary key (sink, posting_id, version) is the way in.)
    yield* this.db
      .prepare<Record<string, unknown>, ReconMovement>(
        `SELECT n.orderno AS orderNo, 'bank' AS channel, l.business_date AS businessDate,
           l.received_at AS receivedAt, l.version, pb.status AS beforeStatus, pb.amount_sen AS beforeAmountSen,
           l.status, l.amount_sen AS amountSen
         FROM ledger_entries l
         JOIN normalised_postings n ON n.posting_id = l.posting_id AND n.version = l.version
         LEFT JOIN ledger_entries pb ON pb.sink = l.sink AND pb.posting_id = l.posting_id
           AND pb.version = (SELECT max(x.version) FROM ledger_entries x WHERE x.sink = l.sink
             AND x.posting_id = l.posting_id AND +x.received_at < @start)
         WHERE l.sink = @sink AND l.received_at >= @start AND l.received_at < @asOf AND l.business_date <= @day
           AND ${LATEST_AT('@asOf')}
           ${options.adjustmentsOnly ? 'AND l.is_adjustment = 1 AND l.business_date < @day' : ''}
         ORDER BY l.business_date, n.orderno, l.version`,
      )
      .iterate(params);
    if (this.agency === null) return;
    yield* this.db
      .prepare<Record<string, unknown>, ReconMovement & { createdAt: string }>(
        `SELECT p.order_no AS orderNo, p.payment_method AS channel, p.created_at AS createdAt,
           e.at AS receivedAt, (SELECT count(*) FROM payment_events x WHERE x.order_no = p.order_no
    AND x.source NOT IN ${NOT_ACQUIRER_SOURCES} AND x.id <= e.id) AS version, eb.status AS beforeStatus,
           CASE WHEN eb.id IS NULL THEN NULL ELSE p.amount_sen END AS beforeAmountSen,
           e.status, p.amount_sen AS amountSen
         FROM payment_events e JOIN payments p ON p.order_no = e.order_no
         LEFT JOIN payment_events eb ON eb.id = ${LATEST_EVENT_AT('@start')}
         WHERE e.source NOT IN ${NOT_ACQUIRER_SOURCES} AND e.at >= @start AND e.at < @asOf AND p.agency_code = @agency
           AND p.created_at < ${options.adjustmentsOnly ? '@start' : '@end'} AND e.id = ${LATEST_EVENT_AT('@asOf')}
         ORDER BY p.created_at, p.order_no`,
      )
      .all(params)
      .map(({ createdAt, ...row }) => ({ ...row, businessDate: businessDate(new Date(createdAt)) }));
  }

  /**
   * Every version received from the start of the day until as-of, of records of this day or earlier, each
   * against the version before it (received at any time): the pending roll's movements, one per version,
   * so a posting that went pending -> success within the day shows both moves. In the order of
   * `movements()`, a record's versions in turn.
   */
  private *versionRows(): Generator<ReconMovement> {
    const params = this.params;
    yield* this.db
      .prepare<Record<string, unknown>, ReconMovement>(
        `SELECT n.orderno AS orderNo, 'bank' AS channel, l.business_date AS businessDate,
           l.received_at AS receivedAt, l.version, pb.status AS beforeStatus, pb.amount_sen AS beforeAmountSen,
           l.status, l.amount_sen AS amountSen
         FROM ledger_entries l
         JOIN normalised_postings n ON n.posting_id = l.posting_id AND n.version = l.version
         LEFT JOIN ledger_entries pb ON pb.sink = l.sink AND pb.posting_id = l.posting_id
           AND pb.version = (SELECT max(x.version) FROM ledger_entries x WHERE x.sink = l.sink
             AND x.posting_id = l.posting_id AND x.version < l.version)
         WHERE l.sink = @sink AND l.received_at >= @start AND l.received_at < @asOf AND l.business_date <= @day
         ORDER BY l.business_date, n.orderno, l.version`,
      )
      .iterate(params);
    if (this.agency === null) return;
    yield* this.db
      .prepare<Record<string, unknown>, ReconMovement & { createdAt: string }>(
        `SELECT p.order_no AS orderNo, p.payment_method AS channel, p.created_at AS createdAt,
           e.at AS receivedAt, (SELECT count(*) FROM payment_events x WHERE x.order_no = p.order_no
             AND x.source NOT IN ${NOT_ACQUIRER_SOURCES} AND x.id <= e.id) AS version,
           eb.status AS beforeStatus, CASE WHEN eb.id IS NULL THEN NULL ELSE p.amount_sen END AS beforeAmountSen,
           e.status, p.amount_sen AS amountSen
         FROM payment_events e JOIN payments p ON p.order_no = e.order_no
         LEFT JOIN payment_events eb ON eb.id = (SELECT max(x.id) FROM payment_events x
           WHERE x.order_no = p.order_no AND x.source NOT IN ${NOT_ACQUIRER_SOURCES} AND x.id < e.id)
         WHERE e.source NOT IN ${NOT_ACQUIRER_SOURCES} AND e.at >= @start AND e.at < @asOf
           AND p.agency_code = @agency AND p.created_at < @end
         ORDER BY p.created_at, p.order_no, e.id`,
      )
      .all(params)
      .map(({ createdAt, ...row }) => ({ ...row, businessDate: businessDate(new Date(createdAt)) }));
  }

  /** Contradicting records received from the start of the day until as-of, with both versions. */
  private anomalyRows(): ReconAnomaly[] {
    const params = this.params;
    const bank = this.db
      .prepare<Record<string, unknown>, ReconAnomaly>(
        `SELECT a.orderno AS orderNo, 'bank' AS channel, a.first_seen_at AS seenAt, a.reason,
           a.stored_record AS stored, a.incoming_record AS incoming
         FROM anomalies a JOIN bank_postings p ON p.id = a.posting_id
         WHERE (CASE WHEN p.route = 'test' OR p.agency_code IS NULL THEN '${TEST_SINK}' ELSE p.agency_code END) = @sink
           AND a.first_seen_at >= @start AND a.first_seen_at < @asOf
         ORDER BY a.first_seen_at, a.orderno, a.incoming_sha256`,
      )
      .all(params);
    if (this.agency === null) return bank;
    const checkout = this.db
      .prepare<Record<string, unknown>, ReconAnomaly>(
        `SELECT a.order_no AS orderNo, coalesce(p.payment_method, 'fpx') AS channel, a.seen_at AS seenAt,
           'acquirer result after a final status (' || a.source || ')' AS reason,
           a.stored_status AS stored, a.incoming_code AS incoming
         FROM payment_anomalies a JOIN payments p ON p.order_no = a.order_no
         WHERE p.agency_code = @agency AND a.seen_at >= @start AND a.seen_at < @asOf
         ORDER BY a.seen_at, a.order_no, a.id`,
      )
      .all(params);
    return [...bank, ...checkout].sort(
      (a, b) => compare(a.seenAt, b.seenAt) || compare(a.orderNo, b.orderNo),
    );
  }

  async readiness(): Promise<ReconReadiness> {
    return this.readinessNow();
  }

  // The sections read their rows synchronously (better-sqlite3), one at a time, on this snapshot's own
  // connection; the async generators only hand them on.
  async *transactions(options: { flaggedOnly?: boolean } = {}): AsyncGenerator<ReconItem> {
    yield* this.transactionRows(options);
  }

  async *pending(at: 'opening' | 'closing'): AsyncGenerator<ReconItem> {
    yield* this.pendingRows(at);
  }

  async *movements(options: { adjustmentsOnly?: boolean } = {}): AsyncGenerator<ReconMovement> {
    yield* this.movementRows(options);
  }

  async *versions(): AsyncGenerator<ReconMovement> {
    yield* this.versionRows();
  }

  async anomalies(): Promise<ReconAnomaly[]> {
    return this.anomalyRows();
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    this.db.exec('COMMIT');
    this.db.close();
  }
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Merges two lists each ordered by (timeUtc, orderNo) into one such list, lazily. */
function* mergeByTime(left: Iterator<ReconItem>, right: readonly ReconItem[]): Generator<ReconItem> {
  let i = 0;
  for (let next = left.next(); !next.done; next = left.next()) {
    const item = next.value;
    while (i < right.length && before(right[i]!, item)) yield right[i++]!;
    yield item;
  }
  while (i < right.length) yield right[i++]!;
}

const before = (a: ReconItem, b: ReconItem): boolean =>
  a.timeUtc < b.timeUtc || (a.timeUtc === b.timeUtc && a.orderNo < b.orderNo);
