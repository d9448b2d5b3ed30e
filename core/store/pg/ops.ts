/**
 * What operators watch, on PostgreSQL (the SQLite twin: ../sqlite/ops.ts): the readiness write and the
 * indexed counts the metrics read at each scrape.
 */
import { TEST_SINK } from '../ledger.ts';
import { statement, type PgDb } from './pool.ts';
import {
  callbacksBacklog,
  type CallbackCount,
  type OpsRepository,
  type OutboxBacklog,
  type ReconHealth,
  type UnledgeredVersions,
} from '../ops.ts';

const BEAT = statement('UPDATE health_heartbeat SET beat = beat + 1, at = $1 WHERE id = 1');
const MARK = statement('SELECT at FROM production_mark WHERE id = 1');
const SERVER_CLOCK = statement(`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`);
// Two statements, each on a partial index: the outbox keeps every row it ever sent.
const WAITING = statement(
  `SELECT queue, count(*) AS n, min(created_at) AS oldest FROM outbox
   WHERE sent_at IS NULL AND failed_at IS NULL GROUP BY queue`,
);
// The callbacks' line (decision 264, callbacksBacklog): every queued callback, and the earliest due. Read in
// callbacks_due's order, which only that index gives without a sort: a plain count was read by a
// walk of the whole table when the statistics were taken while nearly every callback was queued (the plan
// test). Exported for the plan test.
export const CALLBACKS_WAITING = statement(
  `SELECT count(*)::int AS n, min(next_attempt_at) AS oldest FROM (
     SELECT next_attempt_at FROM callbacks WHERE state = 'queued' ORDER BY next_attempt_at, id LIMIT 100000000
   ) queued`,
);
const FAILED = statement(
  'SELECT queue, count(*) AS n FROM outbox WHERE failed_at IS NOT NULL AND sent_at IS NULL GROUP BY queue',
);
// The callbacks an operator acts on, as SQLite's (../sqlite/ops.ts, decision 238). Exported for the plan test.
export const CALLBACK_COUNTS = statement(
  `SELECT state, CASE WHEN attempts = 0 THEN '0' WHEN attempts = 1 THEN '1' WHEN attempts < 5 THEN '2-4'
     ELSE '5+' END AS attempts, count(*) AS count
   FROM callbacks WHERE state IN ('queued', 'dead', 'gone') GROUP BY 1, 2 ORDER BY 1, 2`,
);
const RECON_HEALTH = statement(
  `SELECT sink, max(finished_at) FILTER (WHERE trigger = 'nightly') AS "lastNightlyAt",
     count(*) FILTER (WHERE finished_at >= $1
       AND EXISTS (SELECT 1 FROM recon_deliveries d WHERE d.run_id = r.id AND d.outcome = 'failed')
       AND NOT EXISTS (SELECT 1 FROM recon_deliveries d WHERE d.run_id = r.id AND d.outcome = 'sent'))
       AS "emailsFailed"
   FROM recon_runs r GROUP BY sink ORDER BY sink`,
);
// As SQLite's: every version a batch brought in gets one ledger entry in its sink, stamped with its batch's
// received_at; entries are counted per received_at on the (sink, received_at) index against the batches.
const UNLEDGERED = statement(
  `WITH sinks AS (SELECT code AS sink FROM agencies UNION ALL SELECT $1),
     batches AS (SELECT received_at, sum(accepted + updated) AS expected FROM webhook_batches
       WHERE received_at >= $2 GROUP BY received_at),
     counted AS MATERIALIZED (SELECT b.received_at, b.expected,
       (SELECT count(*) FROM ledger_entries l
        WHERE l.sink IN (SELECT sink FROM sinks) AND l.received_at = b.received_at) AS ledgered
       FROM batches b)
   SELECT coalesce(sum(expected - ledgered), 0) AS count, min(received_at) AS "oldestReceivedAt"
   FROM counted WHERE ledgered < expected`,
);

/** What operators watch: the readiness write and the cheap, indexed counts the metrics read. */
export function pgOps(db: PgDb): OpsRepository {
  return {
    async heartbeat(now) {
      await db.run(BEAT, [now.toISOString()]);
    },

    async markProduction(now) {
      // The first mark stands: RETURNING gives the row only when this call made it.
      const made = await db.row<{ at: string }>(
        'INSERT INTO production_mark (id, at) VALUES (1, $1) ON CONFLICT DO NOTHING RETURNING at',
        [now.toISOString()],
      );
      return (made ?? (await db.row<{ at: string }>(MARK)))?.at ?? now.toISOString();
    },

    async productionMark() {
      return (await db.row<{ at: string }>(MARK))?.at;
    },

    async serverClockMs() {
      return (await db.row<{ ms: number }>(SERVER_CLOCK))?.ms;
    },

    async outboxBacklog() {
      const byQueue = new Map<string, OutboxBacklog>();
      const of = (queue: string) => {
        let row = byQueue.get(queue);
        if (!row) byQueue.set(queue, (row = { queue, waiting: 0, failed: 0, oldestWaitingAt: null }));
        return row;
      };
      const [waiting, failed, callbacks] = await Promise.all([
        db.rows<{ queue: string; n: number; oldest: string }>(WAITING),
        db.rows<{ queue: string; n: number }>(FAILED),
        db.row<{ n: number; oldest: string | null }>(CALLBACKS_WAITING),
      ]);
      for (const w of waiting) Object.assign(of(w.queue), { waiting: w.n, oldestWaitingAt: w.oldest });
      for (const f of failed) of(f.queue).failed = f.n;
      const line = callbacksBacklog(callbacks);
      byQueue.set(line.queue, line);
      return [...byQueue.values()].sort((a, b) => a.queue.localeCompare(b.queue));
    },

    async callbackCounts() {
      return db.rows<CallbackCount>(CALLBACK_COUNTS);
    },

    async reconHealth(since) {
      return db.rows<ReconHealth>(RECON_HEALTH, [since.toISOString()]);
    },

    async unledgeredVersions(since) {
      return (
        (await db.row<UnledgeredVersions>(UNLEDGERED, [TEST_SINK, since.toISOString()])) ?? {
          count: 0,
          oldestReceivedAt: null,
        }
      );
    },
  };
}
