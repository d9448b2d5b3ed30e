/**
 * Merchant callbacks on PostgreSQL (the SQLite twin: ../sqlite/callbacks.ts). A callback's row is its queue
 * (decision 264): workers on several machines lease the due ones with FOR UPDATE SKIP LOCKED (a row another
 * worker is leasing right now is skipped, never waited for), none while an older callback of its order is
 * still leased, so a newer status never overtakes an older one being delivered. The finishes asked for
 * within a few milliseconds of each other go to the server as one statement (micro-batch.ts, decision 195).
 */
import { CALLBACK_QUEUE } from '../../queues.ts';
import { outboxSignal } from '../outbox-signal.ts';
import { microBatcher } from './micro-batch.ts';
import { isRetryable, statement, type PgDb, type Queryable } from './pool.ts';
import { DELIVERY_LINGER } from '../linger.ts';
import type { CallbackDraft } from '../orders.ts';
import type {
  AttemptVerdict,
  CallbackAttempt,
  CallbackLease,
  CallbackRow,
  CallbacksRepository,
} from '../callbacks.ts';

const CALLBACK_COLUMNS = `c.id, c.order_no AS "orderNo", p.agency_code AS "agencyCode", c.status, c.url, c.fields,
  c.created_at AS "createdAt", c.state, c.attempts, c.next_attempt_at AS "nextAttemptAt",
  c.finished_at AS "finishedAt"`;

const SUPERSEDE_QUEUED = statement(
  `UPDATE callbacks SET state = 'superseded', finished_at = $1 WHERE order_no = $2 AND state = 'queued'`,
);
const INSERT_CALLBACK = statement(
  // With its order's agency: the dashboard lists an agency's callbacks by it (decision 239).
  `INSERT INTO callbacks (order_no, agency_code, status, url, fields, created_at, next_attempt_at)
   SELECT order_no, agency_code, $2, $3, $4, $5, $5 FROM payments WHERE order_no = $1 RETURNING id`,
);
// The due callbacks, oldest due first, leased in one statement (its own transaction). `due` reads the range
// of callbacks_due up to now, skipping the rows another process is leasing right now (never waiting for
// them) and those leased already (a row leased and committed since this statement began is re-read when it
// is locked, and dropped); MATERIALIZED, as a locking subquery joined in place may be scanned again and pick
// other rows. A callback is left while an older callback of its order is leased, a superseded one still
// being delivered (at most one callback of an order is queued: a settlement supersedes under the order's row
// lock), before the LIMIT: those held back never take the places of due ones. That check is a scalar
// subquery, looked up per candidate in its order's index range: as NOT EXISTS the planner made it an anti
// join over every callback, and as `count(*) = 0` it estimated it kept one row in 200, so with statistics
// taken before a backlog was due it planned a bitmap scan of every due callback, the check on each, and a
// sort (120 ms a lease for 18,000 due); a boolean subquery is estimated to keep half, and the due callbacks
// are read in the index's order (decision 266; the plan test has both traps). The leased rows are updated
// by id from an array, not joined: a join estimated at a tenth of the table (the generic plan's guess for
// LIMIT $2) was hashed over every callback. Each comes with its order's agency and that agency's key.
// Exported for the plan test.
export const LEASE_DUE = statement(
  `WITH due AS MATERIALIZED (
     SELECT c.id FROM callbacks c
     WHERE c.state = 'queued' AND c.next_attempt_at <= $1 AND (c.lease_until IS NULL OR c.lease_until <= $1)
       AND NOT (SELECT EXISTS (SELECT FROM callbacks o
                               WHERE o.order_no = c.order_no AND o.id < c.id AND o.lease_until > $1))
     ORDER BY c.next_attempt_at, c.id LIMIT $2
     FOR UPDATE OF c SKIP LOCKED
   ), leased AS (
     UPDATE callbacks c SET lease_until = $3 WHERE c.id = ANY (ARRAY (SELECT id FROM due))
     RETURNING c.id, c.order_no, c.status, c.url, c.fields, c.created_at, c.state, c.attempts,
       c.next_attempt_at, c.finished_at
   )
   SELECT c.id, c.order_no AS "orderNo", p.agency_code AS "agencyCode", c.status, c.url, c.fields,
     c.created_at AS "createdAt", c.state, c.attempts, c.next_attempt_at AS "nextAttemptAt",
     c.finished_at AS "finishedAt", g.api_key AS "apiKey"
   FROM leased c JOIN payments p USING (order_no) JOIN agencies g ON g.code = p.agency_code
   ORDER BY c.next_attempt_at, c.id`,
);
// The finishes of a batch in one statement (decision 195): each one's attempt, and its callback's state and
// lease (a retry keeps the state, so a callback superseded meanwhile stays superseded, and sets when it is
// due again; the lease is ended only if it is still the one this attempt held). One statement is one
// transaction: all of it or nothing.
const FINISH = statement(
  `WITH v AS (
     SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::integer[], $4::integer[], $5::text[], $6::text[],
       $7::text[], $8::timestamptz[], $9::timestamptz[])
       AS v(id, at, status_code, latency_ms, error, response_prefix, verdict, next_at, lease_until)
   ), attempts AS (
     INSERT INTO callback_attempts (callback_id, at, status_code, latency_ms, error, response_prefix)
     SELECT id, at, status_code, latency_ms, error, response_prefix FROM v
   ), updated AS (
     UPDATE callbacks c SET attempts = c.attempts + 1,
       lease_until = CASE WHEN v.lease_until IS NULL OR c.lease_until = v.lease_until THEN NULL
                          ELSE c.lease_until END,
       next_attempt_at = CASE WHEN v.verdict = 'queued' THEN v.next_at END,
       state = CASE WHEN v.verdict = 'queued' THEN c.state
                    WHEN c.state = 'queued' OR v.verdict = 'delivered' THEN v.verdict ELSE c.state END,
       finished_at = CASE WHEN v.verdict = 'queued' THEN c.finished_at ELSE v.at END
     FROM v WHERE c.id = v.id
     RETURNING c.id
   )
   SELECT count(*) AS n FROM updated`,
);
// The count rows as they are now, each agency, state and attempted summed into one row (decision 245), in one
// statement. Only the rows this statement's snapshot sees are deleted: rows appended meanwhile stay, and are
// folded the next time. One process folds at a time (the advisory lock; the others skip).
const FOLD_COUNTS = statement(
  `WITH folding AS MATERIALIZED (SELECT pg_try_advisory_xact_lock($1) AS mine),
   gone AS (
     DELETE FROM callback_count_deltas WHERE (SELECT mine FROM folding)
     RETURNING agency_code, state, attempted, n
   ), folded AS (
     INSERT INTO callback_count_deltas (agency_code, state, attempted, n)
     SELECT agency_code, state, attempted, sum(n) FROM gone GROUP BY 1, 2, 3 HAVING sum(n) <> 0
   )
   SELECT count(*)::int AS n FROM gone`,
);
/** pg_try_advisory_xact_lock key of the fold ('amcf'). */
const FOLD_LOCK = 0x616d6366;
const LOCK_ORDER = statement('SELECT order_no FROM payments WHERE order_no = $1 FOR UPDATE');
const LATEST_OF_ORDER = statement(
  'SELECT status, url, fields FROM callbacks WHERE order_no = $1 ORDER BY id DESC LIMIT 1',
);
// The failing ones ($1) from the state index (few), not a walk of every callback newest first.
const LIST = statement(
  `SELECT ${CALLBACK_COLUMNS} FROM callbacks c JOIN payments p USING (order_no)
   WHERE NOT $1 OR (c.state IN ('queued', 'dead', 'gone') AND (c.state <> 'queued' OR c.attempts > 0))
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

/**
 * Each of the callbacks' attempts, in order, read in one query (the fpxrequest report's order, the
 * dashboard's callbacks page and order page); a callback without attempts has an empty list.
 */
export async function attemptLogs(
  db: Queryable,
  ids: readonly number[],
): Promise<Map<number, CallbackAttempt[]>> {
  const logs = new Map(ids.map((id) => [id, [] as CallbackAttempt[]]));
  if (ids.length === 0) return logs;
  const found = await db.rows<CallbackAttempt & { callbackId: number }>(ATTEMPTS_OF, [ids]);
  for (const { callbackId, ...attempt } of found) logs.get(callbackId)?.push(attempt);
  return logs;
}

/** One finish of a batch. */
interface Finish {
  id: number;
  attempt: CallbackAttempt;
  verdict: AttemptVerdict;
  leaseUntil: string | undefined;
}

/** Finishes run at once per process; the rest wait and join the next batch. */
const BATCHES_IN_FLIGHT = 3;
/** At most this many finishes in one statement (a worker delivers 32 callbacks at once). */
const MAX_BATCH = 64;

/** Runs `fn` again after a deadlock or serialization failure. */
async function retried<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 5 || !isRetryable(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}

/** The finishes of a batch: one statement (a callback finished twice in one batch is not batched). */
async function finishBatch(db: PgDb, finishes: readonly Finish[]): Promise<void[]> {
  // One UPDATE cannot change a row twice: a batch holding one callback twice (two attempts of one callback
  // finishing together: only when a lease ran out during its attempt) fails, and its items run again one by
  // one (micro-batch.ts).
  if (new Set(finishes.map((f) => f.id)).size < finishes.length)
    throw new Error('a callback twice in one batch');
  const retry = (f: Finish) => (f.verdict.state === 'queued' ? f.verdict : undefined);
  await retried(() =>
    db.run(FINISH, [
      finishes.map((f) => f.id),
      finishes.map((f) => f.attempt.at),
      finishes.map((f) => f.attempt.statusCode),
      finishes.map((f) => Math.round(f.attempt.latencyMs)),
      finishes.map((f) => f.attempt.error),
      finishes.map((f) => f.attempt.responsePrefix),
      finishes.map((f) => f.verdict.state),
      finishes.map((f) => retry(f)?.nextAttemptAt ?? null),
      finishes.map((f) => f.leaseUntil ?? null),
    ]),
  );
  return finishes.map(() => undefined);
}

/**
 * Queues a callback for an order inside the caller's transaction (the settlement's, which holds the
 * order's row), superseding any older one not yet delivered. Due at once: the workers that lease callbacks
 * are woken after the commit (decision 220).
 */
export async function queueCallback(
  tx: Queryable,
  orderNo: string,
  status: string,
  draft: CallbackDraft,
  at: string,
): Promise<number> {
  await tx.run(SUPERSEDE_QUEUED, [at, orderNo]);
  const inserted = await tx.row<{ id: number }>(INSERT_CALLBACK, [
    orderNo,
    status,
    draft.url,
    JSON.stringify(draft.fields),
    at,
  ]);
  // As the order's foreign key refused it before: no callback for an order that is not stored.
  if (!inserted) throw new Error(`no order ${orderNo} to queue a callback for`);
  tx.afterCommit(() => outboxSignal.announce(CALLBACK_QUEUE));
  return inserted.id;
}

/** Merchant callbacks: leases, attempts and retries, and what ops and reports read. */
export function pgCallbacks(db: PgDb): CallbacksRepository {
  // Finishes of deliveries running at once share a statement (decision 195).
  const batching = { linger: DELIVERY_LINGER, maxBatch: MAX_BATCH, inFlight: BATCHES_IN_FLIGHT };
  const finish = microBatcher<Finish, void>((finishes) => finishBatch(db, finishes), batching);
  return {
    async leaseDue(limit, now, leaseUntil) {
      // No retry on deadlock here: the lease skips locked rows and never waits for one.
      const rows = await db.rows<CallbackRow & { apiKey: string | null }>(LEASE_DUE, [
        now,
        limit,
        leaseUntil,
      ]);
      return rows.map(({ apiKey, ...callback }): CallbackLease => ({
        callback,
        apiKey: apiKey ?? undefined,
        leaseUntil,
      }));
    },

    async finishAttempt(id, attempt, verdict, leaseUntil) {
      await finish({ id, attempt, verdict, leaseUntil });
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
      const logs = await attemptLogs(
        db,
        rows.map((r) => r.id),
      );
      return rows.map((row) => ({ ...row, attemptLog: logs.get(row.id) ?? [] }));
    },

    async foldCounts() {
      return (await db.row<{ n: number }>(FOLD_COUNTS, [FOLD_LOCK]))?.n ?? 0;
    },
  };
}
