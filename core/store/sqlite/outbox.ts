import type { Db } from './db.ts';
import { groupCommitter } from './group-commit.ts';
import { outboxSignal } from '../outbox-signal.ts';
import {
  RECENT_OUTBOX_ROWS,
  queueStatsOf,
  type OutboxCompletion,
  type OutboxRepository,
  type OutboxRow,
  type QueueStats,
} from '../outbox.ts';

/**
 * Writes an outbox row inside the caller's transaction; a repeated job id is ignored (idempotent). A row
 * with `notBefore` is handed over only from then on (a scheduled retry).
 */
export function outboxWriter(db: Db) {
  const insert = db.prepare<[string, string, string, string, string | null]>(
    `INSERT INTO outbox (queue, job_id, payload, created_at, next_try_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (job_id) DO NOTHING`,
  );
  return (queue: string, jobId: string, payload: unknown, at: string, notBefore?: string): void => {
    insert.run(queue, jobId, JSON.stringify(payload), at, notBefore ?? null);
    // Heard after this turn, by when the synchronous transaction around this write has committed.
    if (notBefore === undefined) outboxSignal.announce(queue);
  };
}

/**
 * Completes a job's outbox row inside the caller's transaction: embedded mode marks the row sent and done
 * at once, Redis mode marks its job done (idempotent; a job id with no row is ignored).
 */
export function outboxCompleter(db: Db) {
  const sent = db.prepare<[string, string, number]>(
    'UPDATE outbox SET sent_at = ?, done_at = ?, last_error = NULL WHERE id = ?',
  );
  const done = db.prepare<[string, string]>(
    'UPDATE outbox SET done_at = ? WHERE job_id = ? AND done_at IS NULL',
  );
  return (completion: OutboxCompletion, at: string): void => {
    if ('sent' in completion) sent.run(at, at, completion.sent);
    else done.run(at, completion.done);
  };
}

// The queues with rows waiting, one index seek each (a skip scan of outbox_waiting: decision 236).
const QUEUES_WAITING = `WITH RECURSIVE queues(name) AS (
    SELECT (SELECT min(queue) FROM outbox WHERE sent_at IS NULL AND failed_at IS NULL)
    UNION ALL
    SELECT (SELECT min(queue) FROM outbox WHERE sent_at IS NULL AND failed_at IS NULL AND queue > queues.name)
    FROM queues WHERE queues.name IS NOT NULL)`;

/**
 * What the runtimes look at (decision 236): of each queue with rows waiting, the oldest due ones, at most
 * $2 (one queue's backlog never hides another's work), read through that queue's own index range; none of
 * queue $3 (the callbacks' rows, an earlier release's: decision 264; a null $3 excludes nothing). Exported for
 * the plan test.
 */
export const OUTBOX_PENDING_SQL = `${QUEUES_WAITING}
  SELECT o.id, o.queue, o.job_id AS jobId, o.payload, o.attempts FROM queues JOIN outbox o
    ON o.id IN (SELECT w.id FROM outbox w
                WHERE w.queue = queues.name AND w.sent_at IS NULL AND w.failed_at IS NULL
                  AND (w.next_try_at IS NULL OR w.next_try_at <= ?)
                ORDER BY w.id LIMIT ?)
  WHERE queues.name IS NOT ? ORDER BY o.id`;

/**
 * The counts of `stats()`, each over an index range of the rows it counts (decision 238): the waiting rows
 * (outbox_waiting), those failed for good (outbox_failed_any), those handed to Redis and not done
 * (outbox_unfinished), and the handed-over ones among the latest ids (a range of the primary key).
 * Exported for the plan test.
 */
export const OUTBOX_STATS_SQL = {
  waiting: `SELECT queue, count(*) AS n FROM outbox WHERE sent_at IS NULL AND failed_at IS NULL GROUP BY queue`,
  failed: `SELECT queue, count(*) AS n FROM outbox WHERE failed_at IS NOT NULL GROUP BY queue`,
  sent: `SELECT queue, count(*) AS n FROM outbox
    WHERE id > (SELECT max(id) FROM outbox) - ${RECENT_OUTBOX_ROWS} AND sent_at IS NOT NULL GROUP BY queue`,
  unfinished: `SELECT queue, count(*) AS n FROM outbox
    WHERE sent_at IS NOT NULL AND done_at IS NULL AND failed_at IS NULL GROUP BY queue`,
} as const;

/** The runtimes' view of the outbox. */
export function sqliteOutbox(db: Db): OutboxRepository {
  const write = outboxWriter(db);
  const complete = outboxCompleter(db);
  // The jobs of one turn record their outcome in one commit (issue 17).
  const inGroup = groupCommitter(db);
  const selectPending = db.prepare<[string, number, string | null], OutboxRow>(OUTBOX_PENDING_SQL);
  const markOne = db.prepare<[string, number]>(
    'UPDATE outbox SET sent_at = ?, last_error = NULL WHERE id = ?',
  );
  // A row the queue refused for good: shown failed, never handed over or re-driven again.
  const markRefused = db.prepare<[string, string, number]>(
    'UPDATE outbox SET failed_at = ?, last_error = ? WHERE id = ?',
  );
  type Count = { queue: string; n: number };
  const statsOf = {
    waiting: db.prepare<[], Count>(OUTBOX_STATS_SQL.waiting),
    failed: db.prepare<[], Count>(OUTBOX_STATS_SQL.failed),
    sent: db.prepare<[], Count>(OUTBOX_STATS_SQL.sent),
    unfinished: db.prepare<[], Count>(OUTBOX_STATS_SQL.unfinished),
  };
  const oldestAfter = db.prepare<[number, number], { id: number; createdAt: string; doneAt: string | null }>(
    'SELECT id, created_at AS createdAt, done_at AS doneAt FROM outbox WHERE id > ? ORDER BY id LIMIT ?',
  );
  // Only rows done before the cutoff, whatever ids are asked for.
  const deleteDone = db.prepare<[string, string]>(
    `DELETE FROM outbox WHERE id IN (SELECT value FROM json_each(?)) AND done_at IS NOT NULL AND done_at < ?`,
  );
  let handing: Promise<unknown> = Promise.resolve();
  return {
    /** Adds a job on its own (a scheduled run); a job id already in the outbox is ignored. */
    async enqueue(queue: string, jobId: string, payload: unknown, now: Date): Promise<void> {
      write(queue, jobId, payload, now.toISOString());
    },

    /**
     * Rows not yet handed over, oldest first, at most `limitPerQueue` of each queue (so one queue's
     * backlog never hides another's work), skipping failed rows and those waiting for a retry.
     */
    async pending(limitPerQueue: number, now: Date, except?: string): Promise<OutboxRow[]> {
      return selectPending.all(now.toISOString(), limitPerQueue, except ?? null);
    },

    async handOver(limitPerQueue, now, send, except) {
      // One hand-over at a time in this process: two relays of one process never read the same rows. The
      // rows stay pending while Redis is asked (a Redis that is down leaves them visibly waiting). Workers
      // on one host sharing the file may still both add a row; BullMQ's job id keeps that to one job.
      const run = handing.then(async () => {
        const rows = selectPending.all(now.toISOString(), limitPerQueue, except ?? null);
        if (rows.length === 0) return 0;
        const refused = (await send(rows)) ?? new Map<number, string>();
        // In the group commit: it shares the commit of the jobs' writes of this turn, and waits for another
        // process's write lock without sleeping this thread.
        await inGroup(() => {
          for (const row of rows) {
            const error = refused.get(row.id);
            if (error === undefined) markOne.run(now.toISOString(), row.id);
            else markRefused.run(now.toISOString(), error.slice(0, 2000), row.id);
          }
        });
        return rows.length;
      });
      handing = run.catch(() => undefined);
      return run;
    },

    async markSentMany(ids: readonly number[], now: Date): Promise<void> {
      const mark = db.prepare('UPDATE outbox SET sent_at = ?, last_error = NULL WHERE id = ?');
      await inGroup(() => {
        for (const id of ids) mark.run(now.toISOString(), id);
      });
    },

    /** Embedded mode: the row's job ran in this process, so it is sent and done at once. */
    async markSent(id: number, now: Date): Promise<void> {
      await inGroup(() => complete({ sent: id }, now.toISOString()));
    },

    /** Redis mode: the job of this id completed (idempotent; a job id with no row is ignored). */
    async markDone(jobId: string, now: Date): Promise<void> {
      await inGroup(() => complete({ done: jobId }, now.toISOString()));
    },

    /** Redis mode: the job of this id can never succeed (a bad payload): not re-added, shown failed. */
    async markFailedForGood(jobId: string, error: string, now: Date): Promise<void> {
      await inGroup(() =>
        db
          .prepare('UPDATE outbox SET failed_at = ?, last_error = ? WHERE job_id = ? AND done_at IS NULL')
          .run(now.toISOString(), error.slice(0, 2000), jobId),
      );
    },

    /** Rows handed to Redis at or before `before` whose jobs have not completed, oldest hand-over first. */
    async unfinished(before: Date, limit: number): Promise<OutboxRow[]> {
      return db
        .prepare<[string, number], OutboxRow>(
          `SELECT id, queue, job_id AS jobId, payload, attempts FROM outbox
           WHERE sent_at IS NOT NULL AND done_at IS NULL AND failed_at IS NULL AND sent_at <= ?
           ORDER BY sent_at LIMIT ?`,
        )
        .all(before.toISOString(), limit);
    },

    /**
     * Records a failed attempt: retried at `retryAt`; or, when `failed`, shown failed (and re-driven at
     * `retryAt` if given: a job past its retry horizon; never if not: a job that can never succeed).
     */
    async markAttemptFailed(
      id: number,
      error: string,
      now: Date,
      retryAt: Date | undefined,
      failed = retryAt === undefined,
    ): Promise<void> {
      await inGroup(() =>
        db
          .prepare(
            `UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_try_at = ?, failed_at = ? WHERE id = ?`,
          )
          .run(error.slice(0, 2000), retryAt?.toISOString() ?? null, failed ? now.toISOString() : null, id),
      );
    },

    async retireQueue(queue: string, now: Date): Promise<number> {
      const at = now.toISOString();
      // Waiting and failed apart: each is a range of its own partial index (never a walk of the outbox).
      const retire = (rows: string) =>
        db
          .prepare(
            `UPDATE outbox SET sent_at = ?, done_at = ?, last_error = NULL, failed_at = NULL
             WHERE queue = ? AND sent_at IS NULL AND ${rows}`,
          )
          .run(at, at, queue).changes;
      return inGroup(
        () =>
          retire('failed_at IS NULL') +
          retire('failed_at IS NOT NULL') +
          // Handed to Redis by a release before decision 218 and never done: nothing runs them any more.
          db
            .prepare(
              `UPDATE outbox SET done_at = ? WHERE queue = ? AND sent_at IS NOT NULL AND done_at IS NULL
                 AND failed_at IS NULL`,
            )
            .run(at, queue).changes,
      );
    },

    async redriveDue(now: Date, queue?: string): Promise<number> {
      return inGroup(
        () =>
          db
            .prepare(
              `UPDATE outbox SET failed_at = NULL
               WHERE failed_at IS NOT NULL AND next_try_at IS NOT NULL AND next_try_at <= ? AND sent_at IS NULL
                 AND (? IS NULL OR queue = ?)`,
            )
            .run(now.toISOString(), queue ?? null, queue ?? null).changes,
      );
    },

    /** Puts failed rows (of one queue, or all) back in line; returns how many. */
    async retryFailed(queue?: string): Promise<number> {
      return inGroup(
        () =>
          db
            .prepare(
              `UPDATE outbox SET failed_at = NULL, next_try_at = NULL, attempts = 0
               WHERE failed_at IS NOT NULL AND (? IS NULL OR queue = ?)`,
            )
            .run(queue ?? null, queue ?? null).changes,
      );
    },

    async failed(): Promise<(OutboxRow & { lastError: string | null; failedAt: string })[]> {
      return db
        .prepare<[], OutboxRow & { lastError: string | null; failedAt: string }>(
          `SELECT id, queue, job_id AS jobId, payload, attempts, last_error AS lastError, failed_at AS failedAt
           FROM outbox WHERE failed_at IS NOT NULL ORDER BY id`,
        )
        .all();
    },

    async oldestAfter(afterId: number, limit: number) {
      return oldestAfter.all(afterId, limit);
    },

    async deleteDone(ids: readonly number[], before: Date): Promise<number> {
      if (ids.length === 0) return 0;
      return inGroup(() => deleteDone.run(JSON.stringify(ids), before.toISOString()).changes);
    },

    async stats(): Promise<QueueStats[]> {
      return queueStatsOf({
        waiting: statsOf.waiting.all(),
        failed: statsOf.failed.all(),
        sent: statsOf.sent.all(),
        unfinished: statsOf.unfinished.all(),
      });
    },
  };
}
