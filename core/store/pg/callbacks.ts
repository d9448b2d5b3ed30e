/**
 * Merchant callbacks on PostgreSQL (the SQLite twin: ../sqlite/callbacks.ts). Workers on several machines
 * lease callbacks: a claim takes the callback's row with FOR UPDATE SKIP LOCKED (a row another worker is
 * claiming right now is 'busy', never waited for), and then locks the order's older callbacks, so a newer
 * status never overtakes an older one still being delivered.
 */
import { CALLBACK_QUEUE, callbackJobId } from '../../queues.ts';
import { completeOutbox, writeOutbox } from './outbox.ts';
import { pgGroupCommitter } from './group-commit.ts';
import { isRetryable, statement, type PgDb, type Queryable } from './pool.ts';
import { DELIVERY_LINGER } from '../linger.ts';
import type { CallbackDraft } from '../orders.ts';
import type { CallbackAttempt, CallbackRow, CallbacksRepository } from '../callbacks.ts';

const CALLBACK_COLUMNS = `c.id, c.order_no AS "orderNo", p.agency_code AS "agencyCode", c.status, c.url, c.fields,
  c.created_at AS "createdAt", c.state, c.attempts, c.next_attempt_at AS "nextAttemptAt",
  c.finished_at AS "finishedAt"`;

const SUPERSEDE_QUEUED = statement(
  `UPDATE callbacks SET state = 'superseded', finished_at = $1 WHERE order_no = $2 AND state = 'queued'`,
);
const INSERT_CALLBACK = statement(
  `INSERT INTO callbacks (order_no, status, url, fields, created_at, next_attempt_at)
   VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`,
);
// A lease in one statement (one round trip, its own transaction: decision 177). In order: the callback's
// row, locked, or skipped when another claimant holds it (then 'busy', never waited for); the order's
// callbacks up to this one, locked in id order as every claimant takes them, counted when leased; the lease,
// taken only when the callback is queued and none of them is leased. A row another claimant changed while
// this one waited for its lock is read as committed (PostgreSQL re-reads a row it locks).
const CLAIM = statement(
  `WITH target AS MATERIALIZED (
     SELECT id, order_no, state FROM callbacks WHERE id = $1 FOR UPDATE SKIP LOCKED
   ), older AS MATERIALIZED (
     SELECT count(*) FILTER (WHERE lease_until > $2) AS n FROM (
       SELECT lease_until FROM callbacks
       WHERE order_no = (SELECT order_no FROM target) AND id <= $1 AND (SELECT state FROM target) = 'queued'
       ORDER BY id FOR UPDATE) o
   ), leased AS (
     UPDATE callbacks c SET lease_until = $3 FROM target
     WHERE c.id = target.id AND target.state = 'queued' AND (SELECT n FROM older) = 0
     RETURNING c.id
   )
   SELECT (SELECT count(*) FROM callbacks WHERE id = $1) AS exists, (SELECT count(*) FROM target) AS locked,
     (SELECT state FROM target) AS "targetState", (SELECT n FROM older) AS "olderLeased",
     (SELECT id FROM leased) AS "leasedId"`,
);
const CALLBACK_BY_ID = statement(
  `SELECT ${CALLBACK_COLUMNS} FROM callbacks c JOIN payments p USING (order_no) WHERE c.id = $1`,
);
const INSERT_ATTEMPT = statement(
  `INSERT INTO callback_attempts (callback_id, at, status_code, latency_ms, error, response_prefix)
   VALUES ($1, $2, $3, $4, $5, $6)`,
);
// RETURNING the state after the update: a callback superseded meanwhile stays superseded.
const SCHEDULE_RETRY = statement(
  `UPDATE callbacks SET attempts = attempts + 1, lease_until = NULL, next_attempt_at = $1 WHERE id = $2
   RETURNING state`,
);
const FINISH = statement(
  `UPDATE callbacks SET attempts = attempts + 1, lease_until = NULL, next_attempt_at = NULL,
     state = CASE WHEN state = 'queued' OR $1 = 'delivered' THEN $1 ELSE state END, finished_at = $2
   WHERE id = $3`,
);
const LOCK_ORDER = statement('SELECT order_no FROM payments WHERE order_no = $1 FOR UPDATE');
const LATEST_OF_ORDER = statement(
  'SELECT status, url, fields FROM callbacks WHERE order_no = $1 ORDER BY id DESC LIMIT 1',
);
const LIST = statement(
  `SELECT ${CALLBACK_COLUMNS} FROM callbacks c JOIN payments p USING (order_no)
   WHERE (NOT $1 OR c.state IN ('dead', 'gone') OR (c.state = 'queued' AND c.attempts > 0))
   ORDER BY c.id DESC LIMIT $2`,
);
const OF_ORDER = statement(
  `SELECT ${CALLBACK_COLUMNS} FROM callbacks c JOIN payments p USING (order_no) WHERE c.order_no = $1
   ORDER BY c.id`,
);
const ATTEMPTS_OF = statement(
  `SELECT callback_id AS "callbackId", at, status_code AS "statusCode", latency_ms AS "latencyMs", error,
     response_prefix AS "responsePrefix"
   FROM callback_attempts WHERE callback_id = ANY($1::bigint[]) ORDER BY id`,
);

/** What the one-statement lease found. */
interface ClaimOutcome {
  exists: number;
  locked: number;
  targetState: string | null;
  olderLeased: number | null;
  leasedId: number | null;
}

/**
 * Queues a callback for an order inside the caller's transaction (the settlement's, which holds the
 * order's row), superseding any older one not yet delivered; its first attempt goes to the outbox.
 */
export async function queueCallback(
  tx: Queryable,
  orderNo: string,
  status: string,
  draft: CallbackDraft,
  at: string,
): Promise<number> {
  await tx.run(SUPERSEDE_QUEUED, [at, orderNo]);
  const { id } = (await tx.row<{ id: number }>(INSERT_CALLBACK, [
    orderNo,
    status,
    draft.url,
    JSON.stringify(draft.fields),
    at,
  ]))!;
  await writeOutbox(tx, CALLBACK_QUEUE, callbackJobId(id, 0), { callbackId: id }, at);
  return id;
}

/** Merchant callbacks: leases, attempts and retries (through the outbox), and what ops and reports read. */
export function pgCallbacks(db: PgDb): CallbacksRepository {
  // Finishes of deliveries answered within a few milliseconds share a transaction (decision 177).
  const inGroup = pgGroupCommitter(db);
  return {
    async claim(id, now, leaseUntil) {
      for (let attempt = 1; ; attempt += 1) {
        try {
          const outcome = (await db.row<ClaimOutcome>(CLAIM, [id, now, leaseUntil]))!;
          if (Number(outcome.locked) === 0)
            return Number(outcome.exists) > 0 ? { refused: 'busy' as const } : { refused: 'done' as const };
          if (outcome.targetState !== 'queued') return { refused: 'done' as const };
          if (outcome.leasedId === null) return { refused: 'busy' as const };
          // Read after the lease's commit: the row as the job delivers it (the lease is the job's now).
          const row = await db.row<CallbackRow>(CALLBACK_BY_ID, [id]);
          return row ? { claimed: row } : { refused: 'done' as const };
        } catch (err) {
          // Two claimants locking one order's callbacks in turn may deadlock: PostgreSQL breaks it, we retry.
          if (attempt >= 5 || !isRetryable(err)) throw err;
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
        }
      }
    },

    async finishAttempt(id, attempt, verdict, completes) {
      await inGroup(async (tx) => {
        await tx.run(INSERT_ATTEMPT, [
          id,
          attempt.at,
          attempt.statusCode,
          Math.round(attempt.latencyMs),
          attempt.error,
          attempt.responsePrefix,
        ]);
        if (verdict.state === 'queued') {
          const after = await tx.row<{ state: string }>(SCHEDULE_RETRY, [verdict.nextAttemptAt, id]);
          if (after?.state === 'queued')
            await writeOutbox(
              tx,
              CALLBACK_QUEUE,
              verdict.jobId,
              { callbackId: id },
              attempt.at,
              verdict.nextAttemptAt,
            );
        } else {
          await tx.run(FINISH, [verdict.state, attempt.at, id]);
        }
        // The job's own row, in the same commit: a crash leaves both undone (the attempt runs again) or both done.
        if (completes) await completeOutbox(tx, completes, attempt.at);
      }, DELIVERY_LINGER);
    },

    async defer(id, jobId, at, notBefore) {
      await writeOutbox(db, CALLBACK_QUEUE, jobId, { callbackId: id }, at, notBefore);
    },

    async redeliver(orderNo, at) {
      return db.transaction(async (tx) => {
        // The order's row, as a settlement takes it: its callbacks are queued one transaction at a time.
        await tx.run(LOCK_ORDER, [orderNo]);
        const latest = await tx.row<{ status: string; url: string; fields: string }>(LATEST_OF_ORDER, [
          orderNo,
        ]);
        if (!latest) return undefined;
        const fields = JSON.parse(latest.fields) as Record<string, string>;
        return queueCallback(tx, orderNo, latest.status, { url: latest.url, fields }, at);
      });
    },

    async list(filter) {
      return db.rows<CallbackRow>(LIST, [filter.failed === true, filter.limit]);
    },

    async ofOrder(orderNo) {
      const rows = await db.rows<CallbackRow>(OF_ORDER, [orderNo]);
      if (rows.length === 0) return [];
      const attempts = await db.rows<CallbackAttempt & { callbackId: number }>(ATTEMPTS_OF, [
        rows.map((r) => r.id),
      ]);
      return rows.map((row) => ({
        ...row,
        attemptLog: attempts
          .filter((a) => a.callbackId === row.id)
          .map(({ callbackId: _id, ...attempt }) => attempt),
      }));
    },
  };
}
