import type { Db } from './db.ts';

export interface OutboxRow {
  id: number;
  queue: string;
  jobId: string;
  payload: string;
  attempts: number;
}

export interface QueueStats {
  queue: string;
  waiting: number;
  failed: number;
  sent: number;
}

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
  };
}

/** The relay's view of the outbox. */
export function outboxRepository(db: Db) {
  const write = outboxWriter(db);
  return {
    /** Adds a job on its own (a scheduled run); a job id already in the outbox is ignored. */
    async enqueue(queue: string, jobId: string, payload: unknown, now: Date): Promise<void> {
      write(queue, jobId, payload, now.toISOString());
    },

    /**
     * Rows not yet handed over, oldest first, at most `limitPerQueue` of each queue (so one queue's
     * backlog never hides another's work), skipping failed rows and those waiting for a retry.
     */
    async pending(limitPerQueue: number, now: Date): Promise<OutboxRow[]> {
      return db
        .prepare<[string, number], OutboxRow>(
          `SELECT id, queue, jobId, payload, attempts FROM (
             SELECT id, queue, job_id AS jobId, payload, attempts,
               row_number() OVER (PARTITION BY queue ORDER BY id) AS nth
             FROM outbox
             WHERE sent_at IS NULL AND failed_at IS NULL AND (next_try_at IS NULL OR next_try_at <= ?))
           WHERE nth <= ? ORDER BY id`,
        )
        .all(now.toISOString(), limitPerQueue);
    },

    async markSentMany(ids: readonly number[], now: Date): Promise<void> {
      const mark = db.prepare('UPDATE outbox SET sent_at = ?, last_error = NULL WHERE id = ?');
      db.transaction(() => {
        for (const id of ids) mark.run(now.toISOString(), id);
      }).immediate();
    },

    async markSent(id: number, now: Date): Promise<void> {
      db.prepare('UPDATE outbox SET sent_at = ?, last_error = NULL WHERE id = ?').run(now.toISOString(), id);
    },

    /** Records a failed attempt: retried at `retryAt`, or failed for good when retryAt is undefined. */
    async markAttemptFailed(id: number, error: string, now: Date, retryAt: Date | undefined): Promise<void> {
      db.prepare(
        `UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_try_at = ?, failed_at = ? WHERE id = ?`,
      ).run(error.slice(0, 2000), retryAt?.toISOString() ?? null, retryAt ? null : now.toISOString(), id);
    },

    /** Puts failed rows (of one queue, or all) back in line; returns how many. */
    async retryFailed(queue?: string): Promise<number> {
      return db
        .prepare(
          `UPDATE outbox SET failed_at = NULL, next_try_at = NULL, attempts = 0
           WHERE failed_at IS NOT NULL AND (? IS NULL OR queue = ?)`,
        )
        .run(queue ?? null, queue ?? null).changes;
    },

    async failed(): Promise<(OutboxRow & { lastError: string | null; failedAt: string })[]> {
      return db
        .prepare<[], OutboxRow & { lastError: string | null; failedAt: string }>(
          `SELECT id, queue, job_id AS jobId, payload, attempts, last_error AS lastError, failed_at AS failedAt
           FROM outbox WHERE failed_at IS NOT NULL ORDER BY id`,
        )
        .all();
    },

    async stats(): Promise<QueueStats[]> {
      return db
        .prepare<[], QueueStats>(
          `SELECT queue,
             sum(sent_at IS NULL AND failed_at IS NULL) AS waiting,
             sum(failed_at IS NOT NULL) AS failed,
             sum(sent_at IS NOT NULL) AS sent
           FROM outbox GROUP BY queue ORDER BY queue`,
        )
        .all();
    },
  };
}

export type OutboxRepository = ReturnType<typeof outboxRepository>;
