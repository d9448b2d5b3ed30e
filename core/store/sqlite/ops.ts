import type { Db } from './db.ts';
import { groupCommitter } from './group-commit.ts';
import { TEST_SINK } from '../ledger.ts';
import {
  callbacksBacklog,
  type CallbackCount,
  type OpsRepository,
  type OutboxBacklog,
  type ReconHealth,
  type UnledgeredVersions,
} from '../ops.ts';

/**
 * The callbacks an operator acts on, by state and attempts made: those still queued (failing ones retry) and
 * those that will never be delivered. Delivered and superseded callbacks are history, one row per callback
 * ever made; counting them at each scrape grew with it (decision 238). Each state is a range of the
 * (state, attempts) index. Exported for the plan test.
 */
export const CALLBACK_COUNTS_SQL = `SELECT state, CASE WHEN attempts = 0 THEN '0' WHEN attempts = 1 THEN '1'
    WHEN attempts < 5 THEN '2-4' ELSE '5+' END AS attempts, count(*) AS count
  FROM callbacks WHERE state IN ('queued', 'dead', 'gone') GROUP BY 1, 2 ORDER BY 1, 2`;

/**
 * What operators watch: the readiness write and the cheap, indexed counts the metrics read at each scrape.
 * Kept apart from the repositories of the pipeline so the two change independently.
 */
export function sqliteOps(db: Db): OpsRepository {
  const write = groupCommitter(db);
  const beat = db.prepare<[string]>('UPDATE health_heartbeat SET beat = beat + 1, at = ? WHERE id = 1');
  // Two statements, each on a partial index: the outbox keeps every row it ever sent.
  const waiting = db.prepare<[], { queue: string; n: number; oldest: string }>(
    `SELECT queue, count(*) AS n, min(created_at) AS oldest FROM outbox
     WHERE sent_at IS NULL AND failed_at IS NULL GROUP BY queue`,
  );
  // The callbacks' line (decision 264, callbacksBacklog): every queued callback, and the earliest due.
  const callbacksWaiting = db.prepare<[], { n: number; oldest: string | null }>(
    `SELECT count(*) AS n, min(next_attempt_at) AS oldest FROM callbacks INDEXED BY callbacks_due
     WHERE state = 'queued'`,
  );
  const failed = db.prepare<[], { queue: string; n: number }>(
    `SELECT queue, count(*) AS n FROM outbox WHERE failed_at IS NOT NULL AND sent_at IS NULL GROUP BY queue`,
  );
  const callbackCounts = db.prepare<[], CallbackCount>(CALLBACK_COUNTS_SQL);
  const reconHealth = db.prepare<[string], ReconHealth>(
    `SELECT sink,
       max(CASE WHEN trigger = 'nightly' THEN finished_at END) AS lastNightlyAt,
       sum(CASE WHEN finished_at >= ?
             AND EXISTS (SELECT 1 FROM recon_deliveries d WHERE d.run_id = r.id AND d.outcome = 'failed')
             AND NOT EXISTS (SELECT 1 FROM recon_deliveries d WHERE d.run_id = r.id AND d.outcome = 'sent')
           THEN 1 ELSE 0 END) AS emailsFailed
     FROM recon_runs r GROUP BY sink ORDER BY sink`,
  );
  // Every version a batch brought in (accepted or updated) gets one ledger entry in its sink, stamped with
  // its batch's received_at (as recon's readiness counts them). Counting entries per received_at on the
  // (sink, received_at) index, against the batches' counts, avoids a lookup per version: a scrape stays
  // a few milliseconds at 100,000 versions a day. Sinks are the agencies and the live-test sink.
  const unledgered = db.prepare<[string, string], UnledgeredVersions>(
    `WITH sinks AS (SELECT code AS sink FROM agencies UNION ALL SELECT ?),
       batches AS (SELECT received_at, sum(accepted + updated) AS expected FROM webhook_batches
         WHERE received_at >= ? GROUP BY received_at),
       counted AS MATERIALIZED (SELECT b.received_at, b.expected,
         (SELECT count(*) FROM ledger_entries l
          WHERE l.sink IN (SELECT sink FROM sinks) AND l.received_at = b.received_at) AS ledgered
         FROM batches b)
     SELECT coalesce(sum(expected - ledgered), 0) AS count, min(received_at) AS oldestReceivedAt
     FROM counted WHERE ledgered < expected`,
  );

  const productionMark = (): string | undefined =>
    db.prepare<[], { at: string }>('SELECT at FROM production_mark WHERE id = 1').get()?.at;

  return {
    /** Commits a write (the readiness probe): throws when the store cannot commit (full disk, read-only). */
    async heartbeat(now: Date): Promise<void> {
      await write(() => beat.run(now.toISOString()));
    },

    async markProduction(now: Date): Promise<string> {
      await write(() =>
        db
          .prepare('INSERT INTO production_mark (id, at) VALUES (1, ?) ON CONFLICT DO NOTHING')
          .run(now.toISOString()),
      );
      return productionMark() ?? now.toISOString();
    },

    productionMark: () => Promise.resolve(productionMark()),

    /** SQLite is on this machine: no other clock to compare with. */
    async serverClockMs(): Promise<undefined> {
      return undefined;
    },

    /** Outbox rows not handed over yet, per queue. */
    async outboxBacklog(): Promise<OutboxBacklog[]> {
      const byQueue = new Map<string, OutboxBacklog>();
      const of = (queue: string) => {
        let row = byQueue.get(queue);
        if (!row) byQueue.set(queue, (row = { queue, waiting: 0, failed: 0, oldestWaitingAt: null }));
        return row;
      };
      for (const w of waiting.all()) Object.assign(of(w.queue), { waiting: w.n, oldestWaitingAt: w.oldest });
      for (const f of failed.all()) of(f.queue).failed = f.n;
      const line = callbacksBacklog(callbacksWaiting.get());
      byQueue.set(line.queue, line);
      return [...byQueue.values()].sort((a, b) => a.queue.localeCompare(b.queue));
    },

    /** Callbacks by state and attempt bucket. */
    async callbackCounts(): Promise<CallbackCount[]> {
      return callbackCounts.all();
    },

    /** Per sink: the last nightly run, and failed e-mails of runs finished since `since`. */
    async reconHealth(since: Date): Promise<ReconHealth[]> {
      return reconHealth.all(since.toISOString());
    },

    /** Versions received since `since` and not in their ledger yet. */
    async unledgeredVersions(since: Date): Promise<UnledgeredVersions> {
      return unledgered.get(TEST_SINK, since.toISOString()) ?? { count: 0, oldestReceivedAt: null };
    },
  };
}
