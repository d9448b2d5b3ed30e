/**
 * Merchant callbacks on PostgreSQL (the SQLite twin: ../sqlite/callbacks.ts). Workers on several machines
 * lease callbacks: a claim takes the callback's row with FOR UPDATE SKIP LOCKED (a row another worker is
 * claiming right now is 'busy', never waited for), and then locks the order's older callbacks, so a newer
 * status never overtakes an older one still being delivered. The leases, and the finishes, asked for within
 * a few milliseconds of each other go to the server as one statement each (micro-batch.ts, decision 195).
 */
import { CALLBACK_QUEUE, callbackJobId } from '../../queues.ts';
import { writeOutbox } from './outbox.ts';
import { microBatcher } from './micro-batch.ts';
import { isRetryable, statement, type PgDb, type Queryable } from './pool.ts';
import { DELIVERY_LINGER } from '../linger.ts';
import type { CallbackDraft } from '../orders.ts';
import type {
  AttemptVerdict,
  CallbackAttempt,
  CallbackClaim,
  CallbackRow,
  CallbacksRepository,
} from '../callbacks.ts';
import type { OutboxCompletion } from '../outbox.ts';

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
// The leases of a batch in one statement (one round trip, its own transaction: decisions 177, 195). In
// order: the queued callbacks asked for, locked, each skipped when another claimant holds it (then 'busy',
// never waited for), read with their order's agency and its key; their orders' callbacks up to each, locked
// in id order as every claimant takes them; the leases, taken for each that has no lease at or before it in
// its order and no older one of its order in this batch. A row changed by another claimant while this one
// waited for its lock is read as committed (PostgreSQL re-reads a row it locks, and checks it is queued).
// A callback not queued is not locked at all: a job of a callback already finished costs no lock.
const CLAIM = statement(
  `WITH asked AS (
     SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::timestamptz[]) AS a(id, now, lease_until)
   ), target AS MATERIALIZED (
     SELECT ${CALLBACK_COLUMNS}, g.api_key AS "apiKey"
     FROM callbacks c JOIN payments p USING (order_no) JOIN agencies g ON g.code = p.agency_code
     WHERE c.id IN (SELECT id FROM asked) AND c.state = 'queued'
     FOR UPDATE OF c SKIP LOCKED
   ), older AS MATERIALIZED (
     SELECT o.id, o.order_no, o.lease_until FROM callbacks o
     WHERE o.order_no IN (SELECT "orderNo" FROM target)
       AND o.id <= (SELECT max(t.id) FROM target t WHERE t."orderNo" = o.order_no)
     ORDER BY o.id FOR UPDATE OF o
   ), free AS (
     SELECT t.id, a.lease_until FROM target t JOIN asked a USING (id)
     WHERE NOT EXISTS (SELECT 1 FROM older o
                       WHERE o.order_no = t."orderNo" AND o.id <= t.id AND o.lease_until > a.now)
       AND NOT EXISTS (SELECT 1 FROM target b WHERE b."orderNo" = t."orderNo" AND b.id < t.id)
   ), leased AS (
     UPDATE callbacks c SET lease_until = f.lease_until FROM free f WHERE c.id = f.id RETURNING c.id
   )
   SELECT a.id AS "askedId", (SELECT x.state FROM callbacks x WHERE x.id = a.id) AS "seenState",
     l.id IS NOT NULL AS leased, t.*
   FROM asked a LEFT JOIN target t USING (id) LEFT JOIN leased l ON l.id = a.id`,
);
// The finishes of a batch in one statement (decision 195): each one's attempt, its callback's state (a
// retry keeps the state, so a callback superseded meanwhile stays superseded, and is only rescheduled), a
// retry's outbox row only when the callback is still queued after the update (read from its RETURNING,
// after any concurrent supersede), and the job's own outbox row completed: embedded mode's by row id (sent
// and done), Redis mode's by job id (done). One statement is one transaction: all of it or nothing.
const FINISH = statement(
  `WITH v AS (
     SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::integer[], $4::integer[], $5::text[], $6::text[],
       $7::text[], $8::timestamptz[], $9::text[], $10::text[])
       AS v(id, at, status_code, latency_ms, error, response_prefix, verdict, next_at, job_id, payload)
   ), attempts AS (
     INSERT INTO callback_attempts (callback_id, at, status_code, latency_ms, error, response_prefix)
     SELECT id, at, status_code, latency_ms, error, response_prefix FROM v
   ), updated AS (
     UPDATE callbacks c SET attempts = c.attempts + 1, lease_until = NULL,
       next_attempt_at = CASE WHEN v.verdict = 'queued' THEN v.next_at END,
       state = CASE WHEN v.verdict = 'queued' THEN c.state
                    WHEN c.state = 'queued' OR v.verdict = 'delivered' THEN v.verdict ELSE c.state END,
       finished_at = CASE WHEN v.verdict = 'queued' THEN c.finished_at ELSE v.at END
     FROM v WHERE c.id = v.id
     RETURNING c.id, c.state
   ), retries AS (
     INSERT INTO outbox (queue, job_id, payload, created_at, next_try_at)
     SELECT $11, v.job_id, v.payload, v.at, v.next_at FROM v JOIN updated u USING (id)
     WHERE v.verdict = 'queued' AND u.state = 'queued'
     ON CONFLICT (job_id) DO NOTHING
   ), sent AS (
     UPDATE outbox o SET sent_at = s.at, done_at = s.at, last_error = NULL
     FROM unnest($12::bigint[], $13::timestamptz[]) AS s(id, at) WHERE o.id = s.id
   ), done AS (
     UPDATE outbox o SET done_at = d.at
     FROM unnest($14::text[], $15::timestamptz[]) AS d(job_id, at) WHERE o.job_id = d.job_id AND o.done_at IS NULL
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

/** What the batch lease found of one callback asked for: the target's columns when it was locked. */
type ClaimOutcome = { askedId: number; seenState: string | null; leased: boolean; apiKey: string | null } & {
  [K in keyof CallbackRow]: CallbackRow[K] | null;
};

/** One finish of a batch. */
interface Finish {
  id: number;
  attempt: CallbackAttempt;
  verdict: AttemptVerdict;
  completes: OutboxCompletion | undefined;
}

/** One lease asked for in a batch. */
interface LeaseAsked {
  id: number;
  now: string;
  leaseUntil: string;
}

/** Leases and finishes run at once per process; the rest wait and join the next batch. */
const BATCHES_IN_FLIGHT = 3;
/** At most this many leases or finishes in one statement (the callback job runs 32 at once). */
const MAX_BATCH = 64;

/** Runs `fn` again after a deadlock or serialization failure (two claimants locking one order's rows in turn). */
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

/** The leases of a batch: one statement; each asked id answered (an id asked twice: the first leases). */
async function claimBatch(db: PgDb, asked: readonly LeaseAsked[]): Promise<CallbackClaim[]> {
  const firsts = new Map<number, LeaseAsked>();
  for (const a of asked) if (!firsts.has(a.id)) firsts.set(a.id, a);
  const unique = [...firsts.values()];
  const rows = await retried(() =>
    db.rows<ClaimOutcome>(CLAIM, [
      unique.map((a) => a.id),
      unique.map((a) => a.now),
      unique.map((a) => a.leaseUntil),
    ]),
  );
  const outcomes = new Map<number, CallbackClaim>();
  for (const row of rows) {
    const { askedId, seenState, leased, apiKey, ...callback } = row;
    let outcome: CallbackClaim;
    // Not locked: no such callback, or not queued (done); or another claimant holds its row right now.
    if (callback.id === null) outcome = seenState === 'queued' ? { refused: 'busy' } : { refused: 'done' };
    else if (!leased) outcome = { refused: 'busy' };
    else outcome = { claimed: callback as CallbackRow, apiKey: apiKey ?? undefined };
    outcomes.set(Number(askedId), outcome);
  }
  const seen = new Set<number>();
  return asked.map((a) => {
    const outcome = outcomes.get(a.id) ?? { refused: 'done' as const };
    // The same callback asked for twice in one batch: the second finds it leased by the first.
    if (seen.has(a.id) && 'claimed' in outcome) return { refused: 'busy' as const };
    seen.add(a.id);
    return outcome;
  });
}

/** The finishes of a batch: one statement (a callback finished twice in one batch is not batched). */
async function finishBatch(db: PgDb, finishes: readonly Finish[]): Promise<void[]> {
  // One UPDATE cannot change a row twice: a batch holding one callback twice (never in practice: the lease
  // is held until the finish) fails, and its items run again one by one (micro-batch.ts).
  if (new Set(finishes.map((f) => f.id)).size < finishes.length)
    throw new Error('a callback twice in one batch');
  const retry = (f: Finish) => (f.verdict.state === 'queued' ? f.verdict : undefined);
  const sent = finishes.filter((f) => f.completes && 'sent' in f.completes);
  const done = finishes.filter((f) => f.completes && 'done' in f.completes);
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
      finishes.map((f) => retry(f)?.jobId ?? null),
      // The payload exactly as writeOutbox writes it.
      finishes.map((f) => JSON.stringify({ callbackId: f.id })),
      CALLBACK_QUEUE,
      sent.map((f) => (f.completes as { sent: number }).sent),
      sent.map((f) => f.attempt.at),
      done.map((f) => (f.completes as { done: string }).done),
      done.map((f) => f.attempt.at),
    ]),
  );
  return finishes.map(() => undefined);
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
  const inserted = await tx.row<{ id: number }>(INSERT_CALLBACK, [
    orderNo,
    status,
    draft.url,
    JSON.stringify(draft.fields),
    at,
  ]);
  // As the order's foreign key refused it before: no callback for an order that is not stored.
  if (!inserted) throw new Error(`no order ${orderNo} to queue a callback for`);
  const { id } = inserted;
  await writeOutbox(tx, CALLBACK_QUEUE, callbackJobId(id, 0), { callbackId: id }, at);
  return id;
}

/** Merchant callbacks: leases, attempts and retries (through the outbox), and what ops and reports read. */
export function pgCallbacks(db: PgDb): CallbacksRepository {
  // Leases, and finishes, of deliveries running at once share a statement each (decision 195).
  const batching = { linger: DELIVERY_LINGER, maxBatch: MAX_BATCH, inFlight: BATCHES_IN_FLIGHT };
  const lease = microBatcher<LeaseAsked, CallbackClaim>((asked) => claimBatch(db, asked), batching);
  const finish = microBatcher<Finish, void>((finishes) => finishBatch(db, finishes), batching);
  return {
    async claim(id, now, leaseUntil) {
      return lease({ id, now, leaseUntil });
    },

    async finishAttempt(id, attempt, verdict, completes) {
      await finish({ id, attempt, verdict, completes });
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
