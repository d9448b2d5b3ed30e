import type { Db } from './db.ts';
import { outboxCompleter, outboxWriter } from './outbox.ts';
import { groupCommitter } from './group-commit.ts';
import { DELIVERY_LINGER } from '../linger.ts';
import { CALLBACK_QUEUE, callbackJobId } from '../../queues.ts';
import type { CallbackDraft } from '../orders.ts';
import type { AttemptVerdict, CallbackAttempt, CallbackRow, CallbacksRepository } from '../callbacks.ts';
import type { OutboxCompletion } from '../outbox.ts';

const CALLBACK_COLUMNS = `c.id, c.order_no AS orderNo, p.agency_code AS agencyCode, c.status, c.url, c.fields,
  c.created_at AS createdAt, c.state, c.attempts, c.next_attempt_at AS nextAttemptAt, c.finished_at AS finishedAt`;

/**
 * Queues a callback for an order inside the caller's transaction (the settlement's), superseding any older
 * one not yet delivered (no stale status); its first attempt goes to the outbox. Returns its id.
 */
export function callbackQueuer(db: Db) {
  const writeOutbox = outboxWriter(db);
  const supersedeQueued = db.prepare<[string, string]>(
    `UPDATE callbacks SET state = 'superseded', finished_at = ? WHERE order_no = ? AND state = 'queued'`,
  );
  const insertCallback = db.prepare<[string, string, string, string, string, string]>(
    // With its order's agency: the dashboard lists an agency's callbacks by it (decision 239).
    `INSERT INTO callbacks (order_no, agency_code, status, url, fields, created_at, next_attempt_at)
     SELECT order_no, agency_code, ?, ?, ?, ?, ? FROM payments WHERE order_no = ?`,
  );
  return (orderNo: string, status: string, draft: CallbackDraft, at: string): number => {
    supersedeQueued.run(at, orderNo);
    const inserted = insertCallback.run(status, draft.url, JSON.stringify(draft.fields), at, at, orderNo);
    // As the order's foreign key refused it before: no callback for an order that is not stored.
    if (inserted.changes !== 1) throw new Error(`no order ${orderNo} to queue a callback for`);
    const id = Number(inserted.lastInsertRowid);
    writeOutbox(CALLBACK_QUEUE, callbackJobId(id, 0), { callbackId: id }, at);
    return id;
  };
}

/** Merchant callbacks: leases, attempts and retries (through the outbox), and what ops and reports read. */
export function sqliteCallbacks(db: Db): CallbacksRepository {
  const writeOutbox = outboxWriter(db);
  const completeOutbox = outboxCompleter(db);
  const queueCallback = callbackQueuer(db);
  // Leases and attempts of the deliveries running at once share commits (issue 17, decision 166).
  const inGroup = groupCommitter(db);
  // The statements of delivery, prepared once: they run for every attempt.
  // With the agency's key: the attempt is signed with the key of the moment it was leased (decision 195).
  const callbackById = db.prepare<[number], CallbackRow & { apiKey: string | null }>(
    `SELECT ${CALLBACK_COLUMNS}, g.api_key AS apiKey
     FROM callbacks c JOIN payments p USING (order_no) JOIN agencies g ON g.code = p.agency_code WHERE c.id = ?`,
  );
  const leasedOfOrder = db.prepare<[string, number, string], { n: number }>(
    `SELECT count(*) AS n FROM callbacks WHERE order_no = ? AND id <= ? AND lease_until > ?`,
  );
  const setLease = db.prepare<[string, number]>('UPDATE callbacks SET lease_until = ? WHERE id = ?');
  const insertAttempt = db.prepare<[number, string, number | null, number, string | null, string]>(
    `INSERT INTO callback_attempts (callback_id, at, status_code, latency_ms, error, response_prefix)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const scheduleRetry = db.prepare<[string, number]>(
    `UPDATE callbacks SET attempts = attempts + 1, lease_until = NULL, next_attempt_at = ? WHERE id = ?`,
  );
  const stateOf = db.prepare<[number], { state: string }>('SELECT state FROM callbacks WHERE id = ?');
  const finish = db.prepare<[string, string, string, number]>(
    `UPDATE callbacks SET attempts = attempts + 1, lease_until = NULL, next_attempt_at = NULL,
       state = CASE WHEN state = 'queued' OR ? = 'delivered' THEN ? ELSE state END, finished_at = ?
     WHERE id = ?`,
  );

  return {
    async claim(id, now, leaseUntil) {
      return inGroup(() => {
        const found = callbackById.get(id);
        if (!found || found.state !== 'queued') return { refused: 'done' as const };
        const leased = leasedOfOrder.get(found.orderNo, id, now);
        if ((leased?.n ?? 0) > 0) return { refused: 'busy' as const };
        setLease.run(leaseUntil, id);
        const { apiKey, ...claimed } = found;
        return { claimed, apiKey: apiKey ?? undefined };
      }, DELIVERY_LINGER);
    },

    async finishAttempt(
      id: number,
      attempt: CallbackAttempt,
      verdict: AttemptVerdict,
      completes?: OutboxCompletion,
    ): Promise<void> {
      await inGroup(() => {
        insertAttempt.run(
          id,
          attempt.at,
          attempt.statusCode,
          Math.round(attempt.latencyMs),
          attempt.error,
          attempt.responsePrefix,
        );
        if (verdict.state === 'queued') {
          // A callback superseded meanwhile stays superseded: the newer one carries the news.
          scheduleRetry.run(verdict.nextAttemptAt, id);
          if (stateOf.get(id)?.state === 'queued') {
            writeOutbox(CALLBACK_QUEUE, verdict.jobId, { callbackId: id }, attempt.at, verdict.nextAttemptAt);
          }
        } else {
          finish.run(verdict.state, verdict.state, attempt.at, id);
        }
        // The job's own row, in the same commit: a crash leaves both undone (the attempt runs again) or both done.
        if (completes) completeOutbox(completes, attempt.at);
      }, DELIVERY_LINGER);
    },

    async defer(id: number, jobId: string, at: string, notBefore: string): Promise<void> {
      await inGroup(() => writeOutbox(CALLBACK_QUEUE, jobId, { callbackId: id }, at, notBefore));
    },

    async redeliver(orderNo: string, at: string): Promise<number | undefined> {
      return inGroup(() => {
        const latest = db
          .prepare<[string], { status: string; url: string; fields: string }>(
            'SELECT status, url, fields FROM callbacks WHERE order_no = ? ORDER BY id DESC LIMIT 1',
          )
          .get(orderNo);
        if (!latest) return undefined;
        const fields = JSON.parse(latest.fields) as Record<string, string>;
        return queueCallback(orderNo, latest.status, { url: latest.url, fields }, at);
      });
    },

    async list(filter: { failed?: boolean; limit: number }): Promise<CallbackRow[]> {
      // The failing ones from the state index (few), not a walk of every callback newest first.
      const sql = filter.failed
        ? `SELECT ${CALLBACK_COLUMNS} FROM callbacks c INDEXED BY callbacks_by_state JOIN payments p USING (order_no)
           WHERE c.state IN ('queued', 'dead', 'gone') AND (c.state <> 'queued' OR c.attempts > 0)
           ORDER BY c.id DESC LIMIT ?`
        : `SELECT ${CALLBACK_COLUMNS} FROM callbacks c JOIN payments p USING (order_no) ORDER BY c.id DESC LIMIT ?`;
      return db.prepare<[number], CallbackRow>(sql).all(filter.limit);
    },

    async ofOrder(orderNo: string): Promise<(CallbackRow & { attemptLog: CallbackAttempt[] })[]> {
      const attempts = db.prepare<[number], CallbackAttempt>(
        `SELECT at, status_code AS statusCode, latency_ms AS latencyMs, error, response_prefix AS responsePrefix
         FROM callback_attempts WHERE callback_id = ? ORDER BY id`,
      );
      return db
        .prepare<[string], CallbackRow>(
          `SELECT ${CALLBACK_COLUMNS} FROM callbacks c JOIN payments p USING (order_no) WHERE c.order_no = ? ORDER BY c.id`,
        )
        .all(orderNo)
        .map((row) => ({ ...row, attemptLog: attempts.all(row.id) }));
    },

    // callback_counts is kept in place by its triggers, in the writing transaction (decision 239).
    async foldCounts() {
      return 0;
    },
  };
}
