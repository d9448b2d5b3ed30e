/**
 * The transactional outbox on PostgreSQL (the SQLite twin: ../outbox.ts). Relays on several machines hand
 * rows over through `handOver()`, which locks the rows it takes with FOR UPDATE SKIP LOCKED until they are
 * marked sent: two relays never hand over the same row.
 */
import {
  RECENT_OUTBOX_ROWS,
  queueStatsOf,
  type OutboxCompletion,
  type OutboxRepository,
  type OutboxRow,
  type QueueStats,
} from '../outbox.ts';
import { statement, type PgDb, type Queryable } from './pool.ts';
import { outboxSignal } from '../outbox-signal.ts';

const INSERT = statement(
  `INSERT INTO outbox (queue, job_id, payload, created_at, next_try_at) VALUES ($1, $2, $3, $4, $5)
   ON CONFLICT (job_id) DO NOTHING`,
);

/** Writes an outbox row inside the caller's transaction; a repeated job id is ignored (idempotent). */
export async function writeOutbox(
  tx: Queryable,
  queue: string,
  jobId: string,
  payload: unknown,
  at: string,
  notBefore?: string,
): Promise<void> {
  await tx.run(INSERT, [queue, jobId, JSON.stringify(payload), at, notBefore ?? null]);
  if (notBefore === undefined) tx.afterCommit(() => outboxSignal.announce(queue));
}

/**
 * The counts of `stats()`, each over an index range of the rows it counts (decision 238), as SQLite's
 * (../sqlite/outbox.ts). Exported for the plan test.
 */
export const OUTBOX_STATS = {
  waiting: statement(
    'SELECT queue, count(*) AS n FROM outbox WHERE sent_at IS NULL AND failed_at IS NULL GROUP BY queue',
  ),
  failed: statement('SELECT queue, count(*) AS n FROM outbox WHERE failed_at IS NOT NULL GROUP BY queue'),
  sent: statement(
    `SELECT queue, count(*) AS n FROM outbox
     WHERE id > (SELECT max(id) FROM outbox) - ${RECENT_OUTBOX_ROWS} AND sent_at IS NOT NULL GROUP BY queue`,
  ),
  unfinished: statement(
    `SELECT queue, count(*) AS n FROM outbox
     WHERE sent_at IS NOT NULL AND done_at IS NULL AND failed_at IS NULL GROUP BY queue`,
  ),
};

const OLDEST_AFTER = statement(
  'SELECT id, created_at AS "createdAt", done_at AS "doneAt" FROM outbox WHERE id > $1 ORDER BY id LIMIT $2',
);
const DELETE_DONE = statement('DELETE FROM outbox WHERE id = ANY($1::bigint[]) AND done_at < $2');

const MARK_SENT_DONE = statement(
  'UPDATE outbox SET sent_at = $1, done_at = $1, last_error = NULL WHERE id = $2',
);
const MARK_DONE = statement('UPDATE outbox SET done_at = $1 WHERE job_id = $2 AND done_at IS NULL');

/**
 * Completes a job's outbox row inside the caller's transaction: embedded mode marks the row sent and done
 * at once, Redis mode marks its job done (idempotent; a job id with no row is ignored).
 */
export async function completeOutbox(tx: Queryable, completion: OutboxCompletion, at: string): Promise<void> {
  if ('sent' in completion) await tx.run(MARK_SENT_DONE, [at, completion.sent]);
  else await tx.run(MARK_DONE, [at, completion.done]);
}

const ROW = `id, queue, job_id AS "jobId", payload, attempts`;
// Of each queue with rows waiting (found by a skip scan of outbox_waiting, one index seek per queue), the
// oldest due rows, at most $2 (one queue's backlog never hides another's work), read through that queue's
// own index range; none of queue $3 (the callbacks' rows, an earlier release's: decision 264; a null $3
// excludes nothing).
// Decision 236: this read every waiting row of every queue. Each queue is a range of one, ordered by
// (queue, id) (decision 256): never through the primary key, whatever the statistics.
const WAITING = `WITH RECURSIVE queues(name) AS (
    SELECT (SELECT min(queue) FROM outbox WHERE sent_at IS NULL AND failed_at IS NULL)
    UNION ALL
    SELECT (SELECT min(queue) FROM outbox WHERE sent_at IS NULL AND failed_at IS NULL AND queue > queues.name)
    FROM queues WHERE queues.name IS NOT NULL)
  SELECT w.id FROM queues CROSS JOIN LATERAL (
    SELECT id FROM outbox
    WHERE queue >= queues.name AND queue <= queues.name AND sent_at IS NULL AND failed_at IS NULL
      AND (next_try_at IS NULL OR next_try_at <= $1)
    ORDER BY queue, id LIMIT $2) w
  WHERE queues.name IS DISTINCT FROM $3::text`;
// The waiting ids are computed once (an array, then read by primary key): as `id IN (...)` the planner,
// misled by a table not analysed since its backlog arrived, joined every waiting row with every other
// (seconds for a few thousand rows: decision 180). Exported for the plan test.
export const PENDING = statement(`SELECT ${ROW} FROM outbox WHERE id = ANY(ARRAY(${WAITING})) ORDER BY id`);
// The conditions again on the locked row: a row another relay sent since this statement began is re-read
// after its lock is released, and dropped.
const CLAIM = statement(
  `SELECT ${ROW} FROM outbox WHERE id = ANY(ARRAY(${WAITING}))
     AND sent_at IS NULL AND failed_at IS NULL AND (next_try_at IS NULL OR next_try_at <= $1)
   ORDER BY id FOR UPDATE SKIP LOCKED`,
);
const MARK_SENT = statement('UPDATE outbox SET sent_at = $1, last_error = NULL WHERE id = ANY($2::bigint[])');
// A row the queue refused for good: shown failed, never handed over or re-driven again.
const MARK_REFUSED = statement('UPDATE outbox SET failed_at = $1, last_error = $2 WHERE id = $3');

/** The outbox repository over a PostgreSQL pool. */
export function pgOutbox(db: PgDb): OutboxRepository {
  return {
    async enqueue(queue, jobId, payload, now) {
      await writeOutbox(db, queue, jobId, payload, now.toISOString());
    },

    async pending(limitPerQueue, now, except) {
      return db.rows<OutboxRow>(PENDING, [now.toISOString(), limitPerQueue, except ?? null]);
    },

    async handOver(limitPerQueue, now, send, except) {
      return db.transaction(async (tx) => {
        const rows = await tx.rows<OutboxRow>(CLAIM, [now.toISOString(), limitPerQueue, except ?? null]);
        if (rows.length === 0) return 0;
        const refused = (await send(rows)) ?? new Map<number, string>();
        const sent = rows.filter((r) => !refused.has(r.id)).map((r) => r.id);
        await tx.run(MARK_SENT, [now.toISOString(), sent]);
        for (const [id, error] of refused)
          await tx.run(MARK_REFUSED, [now.toISOString(), error.slice(0, 2000), id]);
        return rows.length;
      });
    },

    async markSentMany(ids, now) {
      await db.run(MARK_SENT, [now.toISOString(), [...ids]]);
    },

    async markSent(id, now) {
      await completeOutbox(db, { sent: id }, now.toISOString());
    },

    async markDone(jobId, now) {
      await completeOutbox(db, { done: jobId }, now.toISOString());
    },

    async markFailedForGood(jobId, error, now) {
      await db.run(
        'UPDATE outbox SET failed_at = $1, last_error = $2 WHERE job_id = $3 AND done_at IS NULL',
        [now.toISOString(), error.slice(0, 2000), jobId],
      );
    },

    async unfinished(before, limit) {
      return db.rows<OutboxRow>(
        `SELECT ${ROW} FROM outbox
         WHERE sent_at IS NOT NULL AND done_at IS NULL AND failed_at IS NULL AND sent_at <= $1
         ORDER BY sent_at LIMIT $2`,
        [before.toISOString(), limit],
      );
    },

    async markAttemptFailed(id, error, now, retryAt, failed = retryAt === undefined) {
      await db.run(
        `UPDATE outbox SET attempts = attempts + 1, last_error = $1, next_try_at = $2, failed_at = $3
         WHERE id = $4`,
        [error.slice(0, 2000), retryAt?.toISOString() ?? null, failed ? now.toISOString() : null, id],
      );
    },

    async retireQueue(queue, now) {
      // Waiting and failed apart: each is a range of its own partial index (never a walk of the outbox).
      const retire = (rows: string) =>
        db.run(
          `UPDATE outbox SET sent_at = $1, done_at = $1, last_error = NULL, failed_at = NULL
           WHERE queue = $2 AND sent_at IS NULL AND ${rows}`,
          [now.toISOString(), queue],
        );
      // Handed to Redis by a release before decision 218 and never done: nothing runs them any more.
      const unfinished = await db.run(
        `UPDATE outbox SET done_at = $1 WHERE queue = $2 AND sent_at IS NOT NULL AND done_at IS NULL
           AND failed_at IS NULL`,
        [now.toISOString(), queue],
      );
      return (await retire('failed_at IS NULL')) + (await retire('failed_at IS NOT NULL')) + unfinished;
    },

    async redriveDue(now, queue) {
      return db.run(
        `UPDATE outbox SET failed_at = NULL
         WHERE failed_at IS NOT NULL AND next_try_at IS NOT NULL AND next_try_at <= $1 AND sent_at IS NULL
           AND ($2::text IS NULL OR queue = $2)`,
        [now.toISOString(), queue ?? null],
      );
    },

    async retryFailed(queue) {
      return db.run(
        `UPDATE outbox SET failed_at = NULL, next_try_at = NULL, attempts = 0
         WHERE failed_at IS NOT NULL AND ($1::text IS NULL OR queue = $1)`,
        [queue ?? null],
      );
    },

    async failed() {
      return db.rows<OutboxRow & { lastError: string | null; failedAt: string }>(
        `SELECT ${ROW}, last_error AS "lastError", failed_at AS "failedAt"
         FROM outbox WHERE failed_at IS NOT NULL ORDER BY id`,
      );
    },

    async oldestAfter(afterId, limit) {
      return db.rows<{ id: number; createdAt: string; doneAt: string | null }>(OLDEST_AFTER, [
        afterId,
        limit,
      ]);
    },

    async deleteDone(ids, before) {
      if (ids.length === 0) return 0;
      // Only rows done before the cutoff, whatever ids are asked for.
      return db.run(DELETE_DONE, [ids, before.toISOString()]);
    },

    async stats(): Promise<QueueStats[]> {
      type Count = { queue: string; n: number };
      const [waiting, failed, sent, unfinished] = await Promise.all([
        db.rows<Count>(OUTBOX_STATS.waiting),
        db.rows<Count>(OUTBOX_STATS.failed),
        db.rows<Count>(OUTBOX_STATS.sent),
        db.rows<Count>(OUTBOX_STATS.unfinished),
      ]);
      return queueStatsOf({ waiting, failed, sent, unfinished });
    },
  };
}
