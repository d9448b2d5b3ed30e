import type { Db } from './db.ts';
import { groupCommitter } from './group-commit.ts';
import { DELIVERY_LINGER } from '../linger.ts';
import { outboxSignal } from '../outbox-signal.ts';
import { CALLBACK_QUEUE } from '../../queues.ts';
import type { CallbackDraft } from '../orders.ts';
import type {
  AttemptVerdict,
  CallbackAttempt,
  CallbackLease,
  CallbackRow,
  CallbacksRepository,
} from '../callbacks.ts';

const CALLBACK_COLUMNS = `c.id, c.order_no AS orderNo, p.agency_code AS agencyCode, c.status, c.url, c.fields,
  c.created_at AS createdAt, c.state, c.attempts, c.next_attempt_at AS nextAttemptAt, c.finished_at AS finishedAt`;

/**
 * Queues a callback for an order inside the caller's transaction (the settlement's), superseding any older
 * one not yet delivered (no stale status). Due at once: the pipeline is woken once the transaction has
 * committed (decision 220). Returns its id.
 */
export function callbackQueuer(db: Db) {
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
    // Heard after this turn, by when the synchronous transaction around this write has committed.
    outboxSignal.announce(CALLBACK_QUEUE);
    return Number(inserted.lastInsertRowid);
  };
}

/** Merchant callbacks: leases, attempts and retries, and what ops and reports read. */
export function sqliteCallbacks(db: Db): CallbacksRepository {
  const queueCallback = callbackQueuer(db);
  // Leases and attempts of the deliveries running at once share commits (issue 17, decision 166).
  const inGroup = groupCommitter(db);
  // The statements of delivery, prepared once: they run for every attempt.
  // The due callbacks not leased, oldest due first: a range of callbacks_due (decision 264). One is left
  // while an older callback of its order (a superseded one still being delivered) is leased.
  const due = db.prepare<{ now: string; limit: number }, { id: number }>(
    `SELECT c.id FROM callbacks c INDEXED BY callbacks_due
     WHERE c.state = 'queued' AND c.next_attempt_at <= @now AND (c.lease_until IS NULL OR c.lease_until <= @now)
       AND NOT EXISTS (SELECT 1 FROM callbacks o INDEXED BY callbacks_by_order
                       WHERE o.order_no = c.order_no AND o.id < c.id AND o.lease_until > @now)
     ORDER BY c.next_attempt_at, c.id LIMIT @limit`,
  );
  const setLease = db.prepare<[string, number]>('UPDATE callbacks SET lease_until = ? WHERE id = ?');
  // With the agency's key: the attempt is signed with the key of the moment it was leased (decision 195).
  const callbackById = db.prepare<[number], CallbackRow & { apiKey: string | null }>(
    `SELECT ${CALLBACK_COLUMNS}, g.api_key AS apiKey
     FROM callbacks c JOIN payments p USING (order_no) JOIN agencies g ON g.code = p.agency_code WHERE c.id = ?`,
  );
  const insertAttempt = db.prepare<[number, string, number | null, number, string | null, string]>(
    `INSERT INTO callback_attempts (callback_id, at, status_code, latency_ms, error, response_prefix)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  // The lease is ended only if it is still the one this attempt held (@lease; null: whatever it is).
  const endLease = `lease_until = CASE WHEN @lease IS NULL OR lease_until = @lease THEN NULL ELSE lease_until END`;
  const scheduleRetry = db.prepare<{ next: string; lease: string | null; id: number }>(
    `UPDATE callbacks SET attempts = attempts + 1, ${endLease}, next_attempt_at = @next WHERE id = @id`,
  );
  const finish = db.prepare<{ verdict: string; at: string; lease: string | null; id: number }>(
    `UPDATE callbacks SET attempts = attempts + 1, ${endLease}, next_attempt_at = NULL,
       state = CASE WHEN state = 'queued' OR @verdict = 'delivered' THEN @verdict ELSE state END,
       finished_at = @at
     WHERE id = @id`,
  );

  return {
    async leaseDue(limit, now, leaseUntil) {
      return inGroup(() => {
        const leases: CallbackLease[] = [];
        for (const { id } of due.all({ now, limit })) {
          setLease.run(leaseUntil, id);
          const { apiKey, ...callback } = callbackById.get(id)!;
          leases.push({ callback, apiKey: apiKey ?? undefined, leaseUntil });
        }
        return leases;
      }, DELIVERY_LINGER);
    },

    async finishAttempt(
      id: number,
      attempt: CallbackAttempt,
      verdict: AttemptVerdict,
      leaseUntil?: string,
    ): Promise<void> {
      const lease = leaseUntil ?? null;
      await inGroup(() => {
        insertAttempt.run(
          id,
          attempt.at,
          attempt.statusCode,
          Math.round(attempt.latencyMs),
          attempt.error,
          attempt.responsePrefix,
        );
        // A retry keeps the state: a callback superseded meanwhile stays superseded (the newer one carries
        // the news), and is no longer in the line of due callbacks.
        if (verdict.state === 'queued') scheduleRetry.run({ next: verdict.nextAttemptAt, lease, id });
        else finish.run({ verdict: verdict.state, at: attempt.at, lease, id });
      }, DELIVERY_LINGER);
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
