/** How a transaction reached the agency: a partner-bank posting, or our checkout by method. */
export type ReconChannel = 'bank' | 'fpx' | 'card' | 'ewallet';
export type ReconStatus = 'success' | 'pending' | 'failed';

/** A posting or checkout payment as it stood at a cut-off. Money in sen. */
export interface ReconItem {
  orderNo: string;
  channel: ReconChannel;
  timeUtc: string;
  businessDate: string;
  name: string | null;
  email: string;
  /** `data.email` of a bank record (trimmed, lower-case), when sent. */
  dataEmail: string | null;
  zakatName: string | null;
  icNo: string | null;
  phone: string | null;
  address: string | null;
  postcode: string | null;
  city: string | null;
  typeRaw: string | null;
  state: string | null;
  year: string | null;
  amountSen: number;
  /** `data.zakat_amount` of a bank record, in sen, when sent. */
  zakatAmountSen: number | null;
  addChargeSen: number;
  rateSen: number | null;
  dependants: number | null;
  status: ReconStatus;
  /** Exception codes of the version shown, as JSON text (a JSON array). */
  exceptions: string;
  version: number;
}

/**
 * A change to a posting or payment: its state before and after. From `movements()`, a record's net change
 * over the day (before the day, at as-of); from `versions()`, one version received (the one before it, it).
 */
export interface ReconMovement {
  orderNo: string;
  channel: ReconChannel;
  businessDate: string;
  /** When the (last) version was received. */
  receivedAt: string;
  version: number;
  beforeStatus: ReconStatus | null;
  beforeAmountSen: number | null;
  status: ReconStatus;
  amountSen: number;
}

/** A record that contradicted what was stored (bank), or an acquirer result after a final status. */
export interface ReconAnomaly {
  orderNo: string;
  channel: ReconChannel;
  seenAt: string;
  reason: string;
  stored: string;
  incoming: string;
}

export interface ReconReadiness {
  /** New versions the webhook accepted from batches received on the day. */
  received: number;
  normalised: number;
  /** Normalised versions of this sink, and how many of them reached its ledger. */
  forSink: number;
  ledgered: number;
}

/**
 * A consistent read of everything one sink's workbook for one business day shows, as of an instant (the
 * run's as-of time, normally the nightly run's start). Versions received later are ignored, so the same
 * archive read as of the same instant gives the same workbook: that is what makes re-runs comparable and
 * replays identical.
 *
 * - the day's transactions: postings and payments of the business day, each at its latest state;
 * - the changes: versions received from the start of the day until the as-of time, of records of this
 *   day or earlier (those of earlier days are the adjustments);
 * - pending: records of this day or earlier pending at the start of the day (opening) and at as-of (closing).
 *
 * One snapshot of the store for all its reads, so the workbook can be streamed over many event-loop turns
 * while the web process keeps writing. The sections stream rows in a stable order, one at a time (memory
 * stays flat for a day of a million rows). Close it when done.
 */
export interface ReconSnapshot {
  readonly sink: string;
  readonly day: string;
  readonly asOf: string;

  /** Whether the pipeline has ledgered every version received from the start of the day until as-of. */
  readiness(): Promise<ReconReadiness>;

  /** Every posting and checkout payment of the business day, at its latest state as of as-of. */
  transactions(options?: { flaggedOnly?: boolean }): AsyncGenerator<ReconItem>;

  /** Records of this day or earlier pending at the day's start (`opening`) or at as-of (`closing`). */
  pending(at: 'opening' | 'closing'): AsyncGenerator<ReconItem>;

  /**
   * Every record of this day or earlier that changed from the start of the day until as-of, with its
   * state before the day and at as-of. `adjustmentsOnly`: only records of earlier days.
   */
  movements(options?: { adjustmentsOnly?: boolean }): AsyncGenerator<ReconMovement>;

  /**
   * Every version received from the start of the day until as-of, of records of this day or earlier, each
   * against the version before it: the pending roll's movements, one per version.
   */
  versions(): AsyncGenerator<ReconMovement>;

  /** Contradicting records received from the start of the day until as-of, with both versions. */
  anomalies(): Promise<ReconAnomaly[]>;

  close(): Promise<void>;
}

/** Opens snapshots of a sink's day for its workbook. */
export interface ReconSnapshotRepository {
  /** A consistent read of one sink's day as of an instant (close it when done). */
  open(sink: string, day: string, asOf: Date): Promise<ReconSnapshot>;
}

/** How far back a checkout payment can still be pending (they expire after PENDING_EXPIRY_MS, 2 h). */
const CHECKOUT_PENDING_LOOKBACK_DAYS = 31;

/**
 * The earliest creation time of a checkout payment that may still be pending at `end` (an ISO instant):
 * the one window the snapshot and the replay archive both read, so a replay sees the payments the run saw.
 */
export function checkoutPendingSince(end: string): string {
  const since = new Date(end);
  since.setUTCDate(since.getUTCDate() - CHECKOUT_PENDING_LOOKBACK_DAYS);
  return since.toISOString();
}
