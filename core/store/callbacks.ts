/** A merchant callback: the status it carries, where it goes, and how its delivery stands. */
export interface CallbackRow {
  id: number;
  orderNo: string;
  agencyCode: string;
  status: string;
  url: string;
  fields: string;
  createdAt: string;
  state: 'queued' | 'delivered' | 'superseded' | 'gone' | 'dead';
  attempts: number;
  nextAttemptAt: string | null;
  finishedAt: string | null;
}

export interface CallbackAttempt {
  at: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responsePrefix: string;
}

/** A leased callback, the key to sign it with (undefined for a legacy agency without one), and the lease's end. */
export interface CallbackLease {
  callback: CallbackRow;
  apiKey: string | undefined;
  leaseUntil: string;
}

/** After an attempt: finished in a final state, or tried again at a time (the callback's next_attempt_at). */
export type AttemptVerdict =
  { state: 'delivered' | 'gone' | 'dead' } | { state: 'queued'; nextAttemptAt: string };

/**
 * Merchant callbacks after settlement (queued by `orders.settle`). A callback's own row is its queue
 * (decision 264): the due ones are leased straight from it, one attempt at a time, every attempt recorded,
 * a retry written as the callback's next_attempt_at. No outbox row is written for a callback.
 */
export interface CallbacksRepository {
  /**
   * Leases up to `limit` queued callbacks due at `now` and not leased, oldest due first, until `leaseUntil`:
   * processes on several machines never lease the same one. A callback is not leased while an older callback
   * of its order is (a superseded one still being delivered), so the merchant never gets a newer status
   * before an older one. Each comes with its agency's current API key, read in the same statement.
   */
  leaseDue(limit: number, now: string, leaseUntil: string): Promise<CallbackLease[]>;

  /**
   * Records an attempt and its verdict in one transaction, and ends the lease `leaseUntil` names: a lease
   * taken since by another process (this one's ran out) is left to it. A retry keeps the state (a callback
   * superseded meanwhile stays superseded) and sets when it is due again. Finishes that arrive within a few
   * milliseconds of each other may share a commit; each resolves after its commit.
   */
  finishAttempt(
    id: number,
    attempt: CallbackAttempt,
    verdict: AttemptVerdict,
    leaseUntil?: string,
  ): Promise<void>;

  /** Sends an order's latest callback again, as a new callback (the old one keeps its history). */
  redeliver(orderNo: string, at: string): Promise<number | undefined>;

  /**
   * Callbacks newest first: every one, or only the failing: given up (dead), refused (gone), or still
   * queued after a failed attempt (retrying: what ops must see while a merchant is down).
   */
  list(filter: { failed?: boolean; limit: number }): Promise<CallbackRow[]>;

  /** An order's callbacks, oldest first, each with its attempts (for the fpxrequest report). */
  ofOrder(orderNo: string): Promise<(CallbackRow & { attemptLog: CallbackAttempt[] })[]>;

  /**
   * Folds the count rows each change of callbacks appended into one row per agency, state and attempted
   * (PostgreSQL, decision 245); returns how many rows it folded. Run now and again by the pipeline's upkeep;
   * the counts are the same before and after. SQLite keeps its counts in place: nothing to fold.
   */
  foldCounts(): Promise<number>;
}
