import type { OutboxCompletion } from './outbox.ts';

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

/** A lease: the callback and the key to sign it with; or why there is none ('busy': try again later). */
export type CallbackClaim =
  { claimed: CallbackRow; apiKey: string | undefined } | { refused: 'done' | 'busy' };

/** After an attempt: finished in a final state, or retried at a time (a new outbox row then). */
export type AttemptVerdict =
  { state: 'delivered' | 'gone' | 'dead' } | { state: 'queued'; nextAttemptAt: string; jobId: string };

/**
 * Merchant callbacks after settlement (queued by `orders.settle`): leased one attempt at a time, every
 * attempt recorded, retried through the outbox.
 */
export interface CallbacksRepository {
  /**
   * Leases a queued callback for one attempt. 'busy' while an older callback of the same order is still
   * being delivered, so the merchant never gets a newer status before an older one. A lease comes with its
   * agency's current API key (undefined for a legacy agency without one), read with it, to sign the attempt.
   * Leases asked for within a few milliseconds of each other may share a statement; each resolves after its
   * commit.
   */
  claim(id: number, now: string, leaseUntil: string): Promise<CallbackClaim>;

  /**
   * Records an attempt and its verdict in one transaction; a retry gets its own outbox row. With
   * `completes`, the outbox row of this attempt's job is completed in the same transaction. Finishes that
   * arrive within a few milliseconds of each other may share a commit; each resolves after its commit.
   */
  finishAttempt(
    id: number,
    attempt: CallbackAttempt,
    verdict: AttemptVerdict,
    completes?: OutboxCompletion,
  ): Promise<void>;

  /** Puts a callback back in line later without counting an attempt (its order was busy). */
  defer(id: number, jobId: string, at: string, notBefore: string): Promise<void>;

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
