import { CALLBACK_QUEUE } from '../queues.ts';

/** Outbox rows of one queue not yet handed over (or failed for good), and how old the oldest waiting is. */
export interface OutboxBacklog {
  queue: string;
  waiting: number;
  failed: number;
  /** created_at of the oldest waiting row; null when none waits. */
  oldestWaitingAt: string | null;
}

/**
 * The callbacks' line of the backlog, from the queued callbacks (decision 264: their own rows are their
 * queue, an outbox row of theirs is an earlier release's): every queued one waits, none fails as a job, and
 * the oldest is the earliest due, so its age is how late the most overdue callback is (a retry due later is 0).
 */
export function callbacksBacklog(queued: { n: number; oldest: string | null } | undefined): OutboxBacklog {
  return {
    queue: CALLBACK_QUEUE,
    waiting: queued?.n ?? 0,
    failed: 0,
    oldestWaitingAt: queued?.oldest ?? null,
  };
}

/** Callbacks of one state whose attempt count falls in one bucket. */
export interface CallbackCount {
  state: string;
  /** '0', '1', '2-4' or '5+': bounded, so the metric's label set is too. */
  attempts: string;
  count: number;
}

/** Per sink: when its last nightly run finished, and its recent runs whose e-mail failed and was not sent. */
export interface ReconHealth {
  sink: string;
  lastNightlyAt: string | null;
  emailsFailed: number;
}

/** Versions received in the window that no ledger holds yet, and when the oldest of them was received. */
export interface UnledgeredVersions {
  count: number;
  oldestReceivedAt: string | null;
}

/**
 * What operators watch: the readiness write and the cheap, indexed counts the metrics read at each scrape.
 * Kept apart from the repositories of the pipeline so the two change independently.
 */
export interface OpsRepository {
  /** Commits a write (the readiness probe): throws when the store cannot commit (full disk, read-only). */
  heartbeat(now: Date): Promise<void>;

  /**
   * Marks the store as production's (the first production process to open it; later calls keep the first
   * time), and returns when it was marked. Decision 293.
   */
  markProduction(now: Date): Promise<string>;

  /** When a production process first opened this store, if one did (decision 293). */
  productionMark(): Promise<string | undefined>;

  /** The database server's clock (epoch ms), to compare with this machine's; undefined on SQLite (decision 259). */
  serverClockMs(): Promise<number | undefined>;

  /** Outbox rows not handed over yet, per queue. */
  outboxBacklog(): Promise<OutboxBacklog[]>;

  /** Callbacks by state and attempt bucket. */
  callbackCounts(): Promise<CallbackCount[]>;

  /** Per sink: the last nightly run, and failed e-mails of runs finished since `since`. */
  reconHealth(since: Date): Promise<ReconHealth[]>;

  /** Versions received since `since` and not in their ledger yet. */
  unledgeredVersions(since: Date): Promise<UnledgeredVersions>;
}
