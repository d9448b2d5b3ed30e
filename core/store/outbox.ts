/** An outbox row: a job to hand to its queue (core/queues.ts names them). */
export interface OutboxRow {
  id: number;
  queue: string;
  jobId: string;
  payload: string;
  attempts: number;
}

/**
 * A job's outbox row completed inside the job's own last write (issue 17), so the runtime writes nothing
 * after it: `sent` in embedded mode (the row's id: sent and done at once), `done` in Redis mode (its job id).
 */
export type OutboxCompletion = { sent: number } | { done: string };

/** A job to write to the outbox with the fact that causes it. */
export interface Job {
  queue: string;
  jobId: string;
  payload: unknown;
}

/** Rows a queue refused for good in a hand-over: row id -> the queue's reason. */
export type RefusedRows = ReadonlyMap<number, string>;

/**
 * How many of the latest outbox ids `stats()` looks at for completed jobs: the outbox keeps every row it
 * handed over, and counting them all at every `amil queues` grew with history (decision 238). BullMQ
 * likewise keeps the latest 10,000 completed jobs of a queue (pipeline/retry.ts).
 */
export const RECENT_OUTBOX_ROWS = 10_000;

/** A queue's outbox rows, each count read from an index range of the rows it counts (decision 238). */
export interface QueueStats {
  queue: string;
  /** Not handed over yet (due now or later). */
  waiting: number;
  /** Failed for good (embedded mode, or a job Redis can never run). */
  failed: number;
  /** Handed over (sent, or sent and done) among the rows of the latest RECENT_OUTBOX_ROWS ids. */
  sent: number;
  /** Handed to Redis and not yet completed (Redis mode): in a queue, or lost with a Redis and re-added. */
  unfinished: number;
}

/** Merges per-queue counts into QueueStats, in queue order (the queues any count names). */
export function queueStatsOf(
  counts: Record<Exclude<keyof QueueStats, 'queue'>, readonly { queue: string; n: number }[]>,
): QueueStats[] {
  const byQueue = new Map<string, QueueStats>();
  for (const [field, rows] of Object.entries(counts) as [
    Exclude<keyof QueueStats, 'queue'>,
    { queue: string; n: number }[],
  ][]) {
    for (const { queue, n } of rows) {
      let stats = byQueue.get(queue);
      if (!stats) byQueue.set(queue, (stats = { queue, waiting: 0, failed: 0, sent: 0, unfinished: 0 }));
      stats[field] = Number(n);
    }
  }
  return [...byQueue.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
}

/**
 * The transactional outbox as the runtimes see it. Rows are written by the other repositories inside the
 * transaction of what causes them; `enqueue` adds one on its own. A repeated job id is ignored.
 */
export interface OutboxRepository {
  /** Adds a job on its own (a scheduled run); a job id already in the outbox is ignored. */
  enqueue(queue: string, jobId: string, payload: unknown, now: Date): Promise<void>;

  /**
   * Rows not yet handed over, oldest first, at most `limitPerQueue` of each queue (so one queue's
   * backlog never hides another's work), skipping failed rows and those waiting for a retry; none of
   * queue `except` (the callbacks', an earlier release's: decision 264).
   */
  pending(limitPerQueue: number, now: Date, except?: string): Promise<OutboxRow[]>;

  /**
   * Redis mode: takes the rows `pending` would return that no other relay holds, hands them to `send`, and
   * marks them sent; when `send` throws, nothing is marked. The rows `send` says the queue refused for good
   * (row id -> why) are marked failed for good instead, so one bad row never holds back the rows behind it.
   * Relays on several machines never hand over the same row (PostgreSQL holds the rows FOR UPDATE SKIP
   * LOCKED until they are marked; SQLite runs one hand-over at a time per process). The rows stay pending
   * meanwhile. The rows of `except` (the callbacks': an earlier release's, retired, decision 264) are never
   * handed over. Returns how many were taken.
   */
  handOver(
    limitPerQueue: number,
    now: Date,
    send: (rows: readonly OutboxRow[]) => Promise<RefusedRows | void>,
    except?: string,
  ): Promise<number>;

  /** Redis mode: the rows were handed to Redis (the reconciler re-added their jobs). */
  markSentMany(ids: readonly number[], now: Date): Promise<void>;

  /** Embedded mode: the row's job ran in this process, so it is sent and done at once. */
  markSent(id: number, now: Date): Promise<void>;

  /** Redis mode: the job of this id completed (idempotent; a job id with no row is ignored). */
  markDone(jobId: string, now: Date): Promise<void>;

  /** Redis mode: the job of this id can never succeed (a bad payload): not re-added, shown failed. */
  markFailedForGood(jobId: string, error: string, now: Date): Promise<void>;

  /** Rows handed to Redis at or before `before` whose jobs have not completed, oldest hand-over first. */
  unfinished(before: Date, limit: number): Promise<OutboxRow[]>;

  /**
   * Records a failed attempt: retried at `retryAt`; or, when `failed`, shown failed (and re-driven at
   * `retryAt` if given: a job past its retry horizon; never if not: a job that can never succeed).
   */
  markAttemptFailed(
    id: number,
    error: string,
    now: Date,
    retryAt: Date | undefined,
    failed?: boolean,
  ): Promise<void>;

  /**
   * Embedded mode: failed rows (of one queue, or all) whose re-drive
   * time has come are put back in line; returns how many.
   */
  redriveDue(now: Date, queue?: string): Promise<number>;

  /**
   * Completes the rows of a queue that no longer runs from the outbox and were not sent (waiting or failed):
   * the callbacks' rows an earlier release writes during a rolling upgrade (decision 264). Returns how many.
   */
  retireQueue(queue: string, now: Date): Promise<number>;

  /** Puts failed rows (of one queue, or all) back in line; returns how many. */
  retryFailed(queue?: string): Promise<number>;

  failed(): Promise<(OutboxRow & { lastError: string | null; failedAt: string })[]>;

  stats(): Promise<QueueStats[]>;

  /** The oldest rows after id `afterId`, at most `limit`, with when each was made and done (the pruner). */
  oldestAfter(
    afterId: number,
    limit: number,
  ): Promise<{ id: number; createdAt: string; doneAt: string | null }[]>;

  /** Deletes those of `ids` whose jobs were done before `before` (decision 241); returns how many. */
  deleteDone(ids: readonly number[], before: Date): Promise<number>;
}
