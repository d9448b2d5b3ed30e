import type { Statement } from 'better-sqlite3';
import type { Db } from './db.ts';
import { groupCommitter } from './group-commit.ts';
import { LEDGER_LINGER } from '../linger.ts';
import { outboxCompleter, outboxWriter } from './outbox.ts';
import type { Job, OutboxCompletion } from '../outbox.ts';
import {
  batchVersionsOf,
  type StoredBatchVersion,
  type BatchVersion,
  type LedgerEntry,
  type LedgerRepository,
  type NormalisedVersion,
} from '../ledger.ts';

/** Rows per multi-row INSERT: 100 x 29 values stays far under SQLite's 32,766 variables. */
const ROWS_PER_INSERT = 100;

const NORMALISED_INSERT = `INSERT INTO normalised_postings (posting_id, version, batch_id, sink, orderno,
  bank_agency, status, amount_sen, name, email, time_utc, business_date, received_date, zakat_name, ic_no, phone,
  state, type_raw, type, year, address, postcode, city, zakat_amount_sen, rate_sen, dependants, exceptions,
  normalised_at, data_email) VALUES `;
const NORMALISED_TUPLE = `(${Array.from({ length: 29 }, () => '?').join(', ')})`;
const NORMALISED_CONFLICT = ' ON CONFLICT (posting_id, version) DO NOTHING';

/**
 * Inserts normalised versions ROWS_PER_INSERT to a statement, with positional values: one call into SQLite
 * per hundred rows, and no object built per row for named parameters. A version already there stays.
 */
function multiRowNormalisedInsert(db: Db) {
  const statements = new Map<number, Statement>();
  const statementFor = (rows: number) => {
    let insert = statements.get(rows);
    if (!insert) {
      const tuples = Array.from({ length: rows }, () => NORMALISED_TUPLE).join(', ');
      insert = db.prepare(NORMALISED_INSERT + tuples + NORMALISED_CONFLICT);
      statements.set(rows, insert);
    }
    return insert;
  };
  return (rows: readonly NormalisedVersion[], at: string): void => {
    for (let first = 0; first < rows.length; first += ROWS_PER_INSERT) {
      const chunk = rows.slice(first, first + ROWS_PER_INSERT);
      const values: unknown[] = [];
      for (const r of chunk) {
        // prettier-ignore
        values.push(r.postingId, r.version, r.batchId, r.sink, r.orderno, r.bankAgency, r.status, r.amountSen,
          r.name, r.email, r.timeUtc, r.businessDate, r.receivedDate, r.zakatName, r.icNo, r.phone, r.state,
          r.typeRaw, r.type, r.year, r.address, r.postcode, r.city, r.zakatAmountSen, r.rateSen, r.dependants,
          JSON.stringify(r.exceptions), at, r.dataEmail);
      }
      statementFor(chunk.length).run(values);
    }
  };
}

/** The normalised versions of bank postings and each sink's ledger. */
export function sqliteLedger(db: Db): LedgerRepository {
  const writeOutbox = outboxWriter(db);
  const complete = outboxCompleter(db);
  // The pipeline's writes of one turn (the sinks' appends of a batch, the next batch's save) share a commit.
  const inGroup = groupCommitter(db);
  const insertNormalised = multiRowNormalisedInsert(db);
  // A version received on a later day than its posting's business day (a late posting, or a pending that
  // settled the next day) is an adjustment of that day: that day's workbook may already have been sent.
  const appendFromBatch = db.prepare(
    `INSERT INTO ledger_entries (sink, posting_id, version, business_date, received_date, is_adjustment, status,
       amount_sen, exceptions, created_at, received_at)
     SELECT sink, posting_id, version, n.business_date, received_date,
       received_date > n.business_date, status, amount_sen, exceptions, @at, b.received_at
     FROM normalised_postings n JOIN webhook_batches b ON b.id = n.batch_id
     WHERE n.batch_id = @batchId AND sink = @sink
     ON CONFLICT (sink, posting_id, version) DO NOTHING`,
  );

  return {
    /** The posting versions a webhook batch brought in, whether or not they were updated since. */
    async batchVersions(batchId: string): Promise<BatchVersion[]> {
      const rows = db
        .prepare<[string, string], StoredBatchVersion>(
          // Version 1 lives in the posting row until the posting first changes, then in the history.
          `SELECT v.posting_id AS postingId, v.version, v.record, v.received_at AS receivedAt,
             p.business_date AS businessDate, p.route, p.agency_code AS agencyCode
           FROM bank_posting_versions v JOIN bank_postings p ON p.id = v.posting_id
           WHERE v.batch_id = ?
           UNION ALL
           SELECT id, 1, record, created_at, business_date, route, agency_code
           FROM bank_postings WHERE first_batch_id = ? AND version = 1
           ORDER BY 1, 2`,
        )
        .all(batchId, batchId);
      return batchVersionsOf(rows);
    },

    /** Stores normalised versions and the jobs they cause, in one transaction. Re-running changes nothing. */
    async saveNormalised(
      rows: readonly NormalisedVersion[],
      jobs: readonly Job[],
      now: Date,
      completes?: OutboxCompletion,
    ): Promise<void> {
      const at = now.toISOString();
      await inGroup(() => {
        insertNormalised(rows, at);
        for (const job of jobs) writeOutbox(job.queue, job.jobId, job.payload, at);
        if (completes) complete(completes, at);
      });
    },

    /**
     * Appends a batch's normalised versions for one sink to that sink's ledger, in one statement, with the
     * job's completion; an entry already there is left as it is (the job may run twice).
     */
    async appendFromBatch(
      batchId: string,
      sink: string,
      now: Date,
      completes?: OutboxCompletion,
    ): Promise<void> {
      const at = now.toISOString();
      await inGroup(() => {
        appendFromBatch.run({ batchId, sink, at });
        if (completes) complete(completes, at);
      }, LEDGER_LINGER);
    },

    /** A sink's ledger entries of a business day (or all), oldest first: for the workbook and tests. */
    async entries(sink: string, day?: string): Promise<LedgerEntry[]> {
      return db
        .prepare<
          { sink: string; day: string | null },
          Omit<LedgerEntry, 'isAdjustment' | 'exceptions'> & { isAdjustment: number; exceptions: string }
        >(
          `SELECT sink, posting_id AS postingId, version, business_date AS businessDate,
             received_date AS receivedDate, is_adjustment AS isAdjustment, status, amount_sen AS amountSen, exceptions
           FROM ledger_entries WHERE sink = @sink AND (@day IS NULL OR business_date = @day) ORDER BY posting_id, version`,
        )
        .all({ sink, day: day ?? null })
        .map((row) => ({
          ...row,
          isAdjustment: row.isAdjustment === 1,
          exceptions: JSON.parse(row.exceptions) as string[],
        }));
    },

    // ledger_day_counts is kept in place by its trigger, in the append's transaction (decision 234).
    async foldDayCounts() {
      return 0;
    },
  };
}
