/** Reconciliation runs on PostgreSQL (the SQLite twin: ../sqlite/recon-runs.ts). */
import { createReadStream } from 'node:fs';
import { RECON_EMAIL_QUEUE, reconEmailJobId, reconRemailJobId } from '../../queues.ts';
import { writeOutbox } from './outbox.ts';
import { statement, type PgDb } from './pool.ts';
import type { ReconDelivery, ReconRunRow, ReconRunsRepository } from '../recon-runs.ts';

const RUN_COLUMNS = `id, sink, business_date AS "businessDate", trigger, as_of AS "asOf", started_at AS "startedAt",
  finished_at AS "finishedAt", fingerprint, file, file_sha256 AS "fileSha256", file_bytes AS "fileBytes",
  input_counts AS "inputCounts", totals, previous_run AS "previousRun", changes`;

type RawRun = Omit<ReconRunRow, 'inputCounts' | 'totals'> & { inputCounts: string; totals: string };
const parseRun = (row: RawRun): ReconRunRow => ({
  ...row,
  inputCounts: JSON.parse(row.inputCounts) as Record<string, number>,
  totals: JSON.parse(row.totals) as unknown,
});

// Runs of one sink's day are recorded one at a time on every machine, so each names the one before it.
const LOCK_DAY = statement(
  `SELECT pg_advisory_xact_lock(hashtextextended('recon-run:' || $1 || ':' || $2, 0))`,
);
const LATEST = statement(
  `SELECT ${RUN_COLUMNS} FROM recon_runs WHERE sink = $1 AND business_date = $2 ORDER BY id DESC LIMIT 1`,
);
const INSERT = statement(
  `INSERT INTO recon_runs (sink, business_date, trigger, as_of, started_at, finished_at, fingerprint, file,
     file_sha256, file_bytes, input_counts, totals, previous_run, changes)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING ${RUN_COLUMNS}`,
);
const NIGHTLY = statement(
  `SELECT ${RUN_COLUMNS} FROM recon_runs WHERE sink = $1 AND business_date = $2 AND trigger = 'nightly'
   ORDER BY id LIMIT 1`,
);
/** The size of a workbook's pieces in recon_files (`amil migrate-store` writes them the same way). */
export const PIECE_BYTES = 1 << 20;
const INSERT_PIECE = statement('INSERT INTO recon_files (run_id, seq, bytes) VALUES ($1, $2, $3)');
const PIECE = statement('SELECT bytes FROM recon_files WHERE run_id = $1 AND seq = $2');
const BY_ID = statement(`SELECT ${RUN_COLUMNS} FROM recon_runs WHERE id = $1`);
const ANY_NIGHTLY = statement(`SELECT 1 FROM recon_runs WHERE trigger = 'nightly' LIMIT 1`);
const HAS_NIGHTLY = statement(
  `SELECT 1 AS one FROM recon_runs WHERE sink = $1 AND business_date = $2 AND trigger = 'nightly' LIMIT 1`,
);
const LIST = statement(
  `SELECT ${RUN_COLUMNS} FROM recon_runs
   WHERE ($1::text IS NULL OR sink = $1) AND ($2::text IS NULL OR business_date >= $2)
     AND ($3::text IS NULL OR business_date <= $3)
   ORDER BY business_date DESC, id DESC LIMIT $4`,
);
const INSERT_DELIVERY = statement(
  `INSERT INTO recon_deliveries (run_id, recipients, attempt, at, outcome, message_id, detail)
   VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
);
const FINISH_DELIVERY = statement(
  'UPDATE recon_deliveries SET outcome = $2, message_id = $3, detail = $4 WHERE id = $1',
);
const SENT_COUNT = statement(
  `SELECT count(*) AS n FROM recon_deliveries WHERE run_id = $1 AND outcome = 'sent'`,
);
const EMAIL_QUEUED = statement('SELECT 1 AS one FROM outbox WHERE job_id = $1');
const DELIVERIES = statement(
  `SELECT run_id AS "runId", recipients, attempt, at, outcome, message_id AS "messageId", detail
   FROM recon_deliveries WHERE run_id = $1 ORDER BY id`,
);

/** Reconciliation runs, their files and their e-mail deliveries. */
export function pgReconRuns(db: PgDb): ReconRunsRepository {
  return {
    async record(run) {
      return db.transaction(async (tx) => {
        await tx.run(LOCK_DAY, [run.sink, run.businessDate]);
        // Two workers may both have built the night's workbook: the first recorded is the night's run.
        if (run.trigger === 'nightly') {
          const nightly = await tx.row<RawRun>(NIGHTLY, [run.sink, run.businessDate]);
          if (nightly) return parseRun(nightly);
        }
        const previous = await tx.row<RawRun>(LATEST, [run.sink, run.businessDate]);
        const row = (await tx.row<RawRun>(INSERT, [
          run.sink,
          run.businessDate,
          run.trigger,
          run.asOf,
          run.startedAt,
          run.finishedAt,
          run.fingerprint,
          run.file,
          run.fileSha256,
          run.fileBytes,
          JSON.stringify(run.inputCounts),
          JSON.stringify(run.totals),
          run.comparedWith !== undefined ? run.comparedWith : (previous?.id ?? null),
          run.changes,
        ]))!;
        // The workbook goes in with its run, in pieces: any machine can read it, and it is kept (and backed
        // up) as long as the run is.
        let seq = 0;
        if (run.localFile !== undefined)
          for await (const piece of createReadStream(run.localFile, { highWaterMark: PIECE_BYTES }))
            await tx.run(INSERT_PIECE, [row.id, seq++, piece]);
        if (run.email)
          await writeOutbox(
            tx,
            RECON_EMAIL_QUEUE,
            reconEmailJobId(row.id),
            { runId: row.id },
            run.finishedAt,
          );
        return parseRun(row);
      });
    },

    async *workbook(runId) {
      // One piece at a time: memory stays at a piece however large the workbook.
      for (let seq = 0; ; seq += 1) {
        const piece = await db.row<{ bytes: Buffer }>(PIECE, [runId, seq]);
        if (!piece) return;
        yield piece.bytes;
      }
    },

    async get(id) {
      const row = await db.row<RawRun>(BY_ID, [id]);
      return row && parseRun(row);
    },

    async latest(sink, day) {
      const row = await db.row<RawRun>(LATEST, [sink, day]);
      return row && parseRun(row);
    },

    async hasNightly(sink, day) {
      return (await db.row(HAS_NIGHTLY, [sink, day])) !== undefined;
    },

    async anyNightly() {
      return (await db.row(ANY_NIGHTLY)) !== undefined;
    },

    async list(filter) {
      const rows = await db.rows<RawRun>(LIST, [
        filter.sink ?? null,
        filter.firstDay ?? null,
        filter.lastDay ?? null,
        filter.limit,
      ]);
      return rows.map(parseRun);
    },

    async requestRemail(runId, at) {
      await db.transaction(async (tx) => {
        const sent = (await tx.row<{ n: number }>(SENT_COUNT, [runId]))?.n ?? 0;
        await writeOutbox(
          tx,
          RECON_EMAIL_QUEUE,
          reconRemailJobId(runId, sent),
          { runId, sentBefore: sent },
          at,
        );
      });
    },

    async finishDelivery(id, end) {
      await db.run(FINISH_DELIVERY, [id, end.outcome, end.messageId, end.detail]);
    },

    async recordDelivery(delivery) {
      const row = await db.row<{ id: number }>(INSERT_DELIVERY, [
        delivery.runId,
        JSON.stringify(delivery.recipients),
        delivery.attempt,
        delivery.at,
        delivery.outcome,
        delivery.messageId,
        delivery.detail,
      ]);
      return row!.id;
    },

    async emailQueued(runId) {
      return (await db.row(EMAIL_QUEUED, [reconEmailJobId(runId)])) !== undefined;
    },

    async deliveries(runId) {
      const rows = await db.rows<Omit<ReconDelivery, 'recipients'> & { recipients: string }>(DELIVERIES, [
        runId,
      ]);
      return rows.map((row) => ({ ...row, recipients: JSON.parse(row.recipients) as string[] }));
    },
  };
}
