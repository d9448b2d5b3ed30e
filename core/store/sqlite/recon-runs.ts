import type { Db } from './db.ts';
import { outboxWriter } from './outbox.ts';
import { groupCommitter } from './group-commit.ts';
import { RECON_EMAIL_QUEUE, reconEmailJobId, reconRemailJobId } from '../../queues.ts';
import type { NewReconRun, ReconDelivery, ReconRunRow, ReconRunsRepository } from '../recon-runs.ts';

const RUN_COLUMNS = `id, sink, business_date AS businessDate, trigger, as_of AS asOf, started_at AS startedAt,
  finished_at AS finishedAt, fingerprint, file, file_sha256 AS fileSha256, file_bytes AS fileBytes,
  input_counts AS inputCounts, totals, previous_run AS previousRun, changes`;

type RawRun = Omit<ReconRunRow, 'inputCounts' | 'totals'> & { inputCounts: string; totals: string };
const parseRun = (row: RawRun): ReconRunRow => ({
  ...row,
  inputCounts: JSON.parse(row.inputCounts) as Record<string, number>,
  totals: JSON.parse(row.totals) as unknown,
});

/** Reconciliation runs, their files and their e-mail deliveries. */
export function sqliteReconRuns(db: Db): ReconRunsRepository {
  const writeOutbox = outboxWriter(db);
  const write = groupCommitter(db);
  return {
    /** Records a finished run and, in the same transaction, the job that e-mails it. */
    async record(run: NewReconRun): Promise<ReconRunRow> {
      return write(() => {
        // Two workers may both have built the night's workbook: the first recorded is the night's run.
        const nightly =
          run.trigger === 'nightly'
            ? db
                .prepare<[string, string], RawRun>(
                  `SELECT ${RUN_COLUMNS} FROM recon_runs
                     WHERE sink = ? AND business_date = ? AND trigger = 'nightly' ORDER BY id LIMIT 1`,
                )
                .get(run.sink, run.businessDate)
            : undefined;
        if (nightly) return parseRun(nightly);
        const previous = db
          .prepare<[string, string], { id: number }>(
            'SELECT id FROM recon_runs WHERE sink = ? AND business_date = ? ORDER BY id DESC LIMIT 1',
          )
          .get(run.sink, run.businessDate);
        const { lastInsertRowid } = db
          .prepare(
            `INSERT INTO recon_runs (sink, business_date, trigger, as_of, started_at, finished_at, fingerprint, file,
               file_sha256, file_bytes, input_counts, totals, previous_run, changes)
             VALUES (@sink, @businessDate, @trigger, @asOf, @startedAt, @finishedAt, @fingerprint, @file, @fileSha256,
               @fileBytes, @inputCounts, @totals, @previousRun, @changes)`,
          )
          .run({
            sink: run.sink,
            businessDate: run.businessDate,
            trigger: run.trigger,
            asOf: run.asOf,
            startedAt: run.startedAt,
            finishedAt: run.finishedAt,
            fingerprint: run.fingerprint,
            file: run.file,
            fileSha256: run.fileSha256,
            fileBytes: run.fileBytes,
            changes: run.changes,
            inputCounts: JSON.stringify(run.inputCounts),
            totals: JSON.stringify(run.totals),
            previousRun: run.comparedWith !== undefined ? run.comparedWith : (previous?.id ?? null),
          });
        const id = Number(lastInsertRowid);
        if (run.email) writeOutbox(RECON_EMAIL_QUEUE, reconEmailJobId(id), { runId: id }, run.finishedAt);
        return parseRun(
          db.prepare<[number], RawRun>(`SELECT ${RUN_COLUMNS} FROM recon_runs WHERE id = ?`).get(id)!,
        );
      });
    },

    // The workbook is the file in DATA_DIR: one machine holds both it and this database.
    // eslint-disable-next-line require-yield
    async *workbook(): AsyncGenerator<Buffer> {
      return;
    },

    async get(id: number): Promise<ReconRunRow | undefined> {
      const row = db.prepare<[number], RawRun>(`SELECT ${RUN_COLUMNS} FROM recon_runs WHERE id = ?`).get(id);
      return row && parseRun(row);
    },

    /** The latest run of a sink's day, if any. */
    async latest(sink: string, day: string): Promise<ReconRunRow | undefined> {
      const row = db
        .prepare<[string, string], RawRun>(
          `SELECT ${RUN_COLUMNS} FROM recon_runs WHERE sink = ? AND business_date = ? ORDER BY id DESC LIMIT 1`,
        )
        .get(sink, day);
      return row && parseRun(row);
    },

    /** Whether a nightly run of that sink's day exists (the nightly job runs each day once). */
    async hasNightly(sink: string, day: string): Promise<boolean> {
      return (
        db
          .prepare(`SELECT 1 FROM recon_runs WHERE sink = ? AND business_date = ? AND trigger = 'nightly'`)
          .get(sink, day) !== undefined
      );
    },

    async anyNightly(): Promise<boolean> {
      return db.prepare(`SELECT 1 FROM recon_runs WHERE trigger = 'nightly' LIMIT 1`).get() !== undefined;
    },

    /** Runs of a sink, newest day first, optionally within [firstDay, lastDay]. */
    async list(filter: {
      sink?: string;
      firstDay?: string;
      lastDay?: string;
      limit: number;
    }): Promise<ReconRunRow[]> {
      return db
        .prepare<Record<string, unknown>, RawRun>(
          `SELECT ${RUN_COLUMNS} FROM recon_runs
           WHERE (@sink IS NULL OR sink = @sink) AND (@firstDay IS NULL OR business_date >= @firstDay)
             AND (@lastDay IS NULL OR business_date <= @lastDay)
           ORDER BY business_date DESC, id DESC LIMIT @limit`,
        )
        .all({
          sink: filter.sink ?? null,
          firstDay: filter.firstDay ?? null,
          lastDay: filter.lastDay ?? null,
          limit: filter.limit,
        })
        .map(parseRun);
    },

    async requestRemail(runId: number, at: string): Promise<void> {
      await write(() => {
        const sent =
          db
            .prepare<[number], { n: number }>(
              `SELECT count(*) AS n FROM recon_deliveries WHERE run_id = ? AND outcome = 'sent'`,
            )
            .get(runId)?.n ?? 0;
        writeOutbox(RECON_EMAIL_QUEUE, reconRemailJobId(runId, sent), { runId, sentBefore: sent }, at);
      });
    },

    async recordDelivery(delivery: ReconDelivery): Promise<number> {
      return write(() =>
        Number(
          db
            .prepare(
              `INSERT INTO recon_deliveries (run_id, recipients, attempt, at, outcome, message_id, detail)
               VALUES (@runId, @recipients, @attempt, @at, @outcome, @messageId, @detail)`,
            )
            .run({ ...delivery, recipients: JSON.stringify(delivery.recipients) }).lastInsertRowid,
        ),
      );
    },

    async finishDelivery(id, end): Promise<void> {
      await write(() =>
        db
          .prepare('UPDATE recon_deliveries SET outcome = ?, message_id = ?, detail = ? WHERE id = ?')
          .run(end.outcome, end.messageId, end.detail, id),
      );
    },

    /** Whether the run's e-mail was queued (not for a replay, a run recorded with no mail, no recipients). */
    async emailQueued(runId: number): Promise<boolean> {
      return db.prepare('SELECT 1 FROM outbox WHERE job_id = ?').get(reconEmailJobId(runId)) !== undefined;
    },

    async deliveries(runId: number): Promise<ReconDelivery[]> {
      return db
        .prepare<[number], Omit<ReconDelivery, 'recipients'> & { recipients: string }>(
          `SELECT run_id AS runId, recipients, attempt, at, outcome, message_id AS messageId, detail
           FROM recon_deliveries WHERE run_id = ? ORDER BY id`,
        )
        .all(runId)
        .map((row) => ({ ...row, recipients: JSON.parse(row.recipients) as string[] }));
    },
  };
}
