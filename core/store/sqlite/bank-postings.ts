import type { Statement } from 'better-sqlite3';
import type { Db } from './db.ts';
import { newId } from '../../ids.ts';
import { NORMALISE_QUEUE, normaliseJobId } from '../../queues.ts';
import { outboxWriter } from './outbox.ts';
import { groupCommitter } from './group-commit.ts';
import { transitionRefusal } from '../posting-transitions.ts';
import type {
  BankPostingsRepository,
  IngestBatchInput,
  PostingStatus,
  PreparedRecord,
  StoredPosting,
} from '../bank-postings.ts';
import type { BankRecordResult, BankWebhookResponse } from '../../../schemas/index.ts';

interface CurrentPosting {
  id: number;
  status: PostingStatus;
  version: number;
  sha256: string;
  record: string;
  batchId: string;
  recordIndex: number;
  createdAt: string;
}

/** Rows per multi-row INSERT: 100 x 18 values stays far under SQLite's 32,766 variables. */
const ROWS_PER_INSERT = 100;

const POSTING_INSERT = `INSERT INTO bank_postings (partner_id, orderno, bank_agency, route, agency_code, status,
  amount_sen, name, email, time_raw, time_utc, business_date, record, content_sha256, version, first_batch_id,
  first_record_index, created_at, updated_at) VALUES `;
const POSTING_TUPLE = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)';

/**
 * Inserts postings (record, index in its batch) as version 1, ROWS_PER_INSERT to a statement (one call into
 * SQLite per hundred rows instead of per row), skipping any whose (partner, orderno) is stored: the unique
 * key's own lookup is the existence check. Returns the ordernos it stored. Statements are prepared once per
 * row count.
 */
function multiRowInsert(db: Db) {
  const statements = new Map<number, Statement>();
  const statementFor = (rows: number) => {
    let insert = statements.get(rows);
    if (!insert) {
      const tuples = Array.from({ length: rows }, () => POSTING_TUPLE).join(', ');
      insert = db.prepare(`${POSTING_INSERT}${tuples} ON CONFLICT (partner_id, orderno) DO NOTHING`);
      statements.set(rows, insert);
    }
    return insert;
  };
  // Only when a statement skipped rows: which of its ordernos this batch created.
  const createdBy = db
    .prepare<[string, string, string], string>(
      `SELECT orderno FROM bank_postings
       WHERE partner_id = ? AND orderno IN (SELECT value FROM json_each(?)) AND first_batch_id = ?`,
    )
    .pluck();
  return (records: readonly [PreparedRecord, number][], partnerId: string, batchId: string, at: string) => {
    const createdHere = new Set<string>();
    for (let first = 0; first < records.length; first += ROWS_PER_INSERT) {
      const chunk = records.slice(first, first + ROWS_PER_INSERT);
      const values: unknown[] = [];
      for (const [r, index] of chunk) {
        // prettier-ignore
        values.push(partnerId, r.orderno, r.bankAgency, r.route, r.agencyCode, r.status, r.amountSen, r.name,
          r.email, r.timeRaw, r.timeUtc, r.businessDate, r.canonical, r.sha256, batchId, index, at, at);
      }
      const { changes } = statementFor(chunk.length).run(values);
      const ordernos = chunk.map(([r]) => r.orderno);
      const created =
        changes === chunk.length ? ordernos : createdBy.all(partnerId, JSON.stringify(ordernos), batchId);
      for (const orderno of created) createdHere.add(orderno);
    }
    return createdHere;
  };
}

/** Bank postings: the batch ingest and its reads. */
export function sqliteBankPostings(db: Db): BankPostingsRepository {
  // The row goes in first (the postings refer to it) without its body, which finishBatch writes with the
  // response: SQLite rewrites a whole row on UPDATE, so a body inserted here would be written twice.
  const insertBatch = db.prepare<[string, string, string, string, string, string, number]>(
    `INSERT INTO webhook_batches (id, partner_id, received_at, business_date, content_type, body, sha256, record_count)
     VALUES (?, ?, ?, ?, ?, x'', ?, ?)`,
  );
  const finishBatch = db.prepare<[Buffer, string | null, number, number, number, number, string, string]>(
    `UPDATE webhook_batches SET body = ?, body_encoding = ?, accepted = ?, duplicate = ?, updated = ?,
       conflict = ?, response = ? WHERE id = ?`,
  );
  const selectCurrent = db.prepare<[string, string], CurrentPosting>(
    `SELECT id, status, version, content_sha256 AS sha256, record, first_batch_id AS batchId,
       first_record_index AS recordIndex, created_at AS createdAt
     FROM bank_postings WHERE partner_id = ? AND orderno = ?`,
  );
  const selectVersionBySha = db.prepare<[number, string], { version: number }>(
    `SELECT version FROM bank_posting_versions WHERE posting_id = ? AND content_sha256 = ?`,
  );
  const insertPostings = multiRowInsert(db);
  const insertVersion = db.prepare<[number, number, string, string, string, string, number, string]>(
    `INSERT INTO bank_posting_versions (posting_id, version, content_sha256, record, status, batch_id,
       record_index, received_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const updateCurrent = db.prepare<[string, number, string, string, string, number]>(
    `UPDATE bank_postings SET status = ?, version = ?, record = ?, content_sha256 = ?, updated_at = ? WHERE id = ?`,
  );
  const upsertAnomaly = db.prepare<Record<string, unknown>, { id: string }>(
    `INSERT INTO anomalies (id, kind, posting_id, orderno, reason, stored_version, stored_record,
       incoming_record, incoming_sha256, first_batch_id, first_seen_at, last_seen_at, business_date)
     VALUES (@id, 'bank_conflict', @postingId, @orderno, @reason, @storedVersion, @storedRecord,
       @incomingRecord, @incomingSha256, @batchId, @at, @at, @businessDate)
     ON CONFLICT (posting_id, incoming_sha256)
       DO UPDATE SET last_seen_at = excluded.last_seen_at, seen_count = seen_count + 1,
         status = 'open', resolved_at = NULL
     RETURNING id`,
  );

  const writeOutbox = outboxWriter(db);

  function judge(
    record: PreparedRecord,
    index: number,
    batchId: string,
    at: string,
    partnerId: string,
    receivedDay: string,
  ): BankRecordResult {
    const base = { index, orderno: record.orderno };
    const current = selectCurrent.get(partnerId, record.orderno);
    // Only records whose orderno was stored, or created earlier in the batch, come here.
    if (!current) throw new Error(`posting ${record.orderno} is neither stored nor created by its batch`);
    const seenBefore =
      current.sha256 === record.sha256 ||
      (current.version > 1 && selectVersionBySha.get(current.id, record.sha256) !== undefined);
    if (seenBefore) return { ...base, outcome: 'duplicate', status: current.status };

    const reason = transitionRefusal(current, record);
    if (reason === undefined) {
      if (current.version === 1) {
        // The history starts when a posting first changes: version 1 moves there from the posting row.
        const v1 = current;
        insertVersion.run(
          v1.id,
          1,
          v1.sha256,
          v1.record,
          v1.status,
          v1.batchId,
          v1.recordIndex,
          v1.createdAt,
        );
      }
      const version = current.version + 1;
      insertVersion.run(
        current.id,
        version,
        record.sha256,
        record.canonical,
        record.status,
        batchId,
        index,
        at,
      );
      updateCurrent.run(record.status, version, record.canonical, record.sha256, at, current.id);
      return { ...base, outcome: 'updated', status: record.status };
    }
    const anomaly = upsertAnomaly.get({
      id: newId('anm'),
      postingId: current.id,
      orderno: record.orderno,
      reason,
      storedVersion: current.version,
      storedRecord: current.record,
      incomingRecord: record.canonical,
      incomingSha256: record.sha256,
      batchId,
      at,
      businessDate: receivedDay,
    });
    return { ...base, outcome: 'conflict', status: current.status, anomaly_id: anomaly?.id ?? '' };
  }

  /** Archives one batch and judges its records in order; runs inside the caller's transaction. */
  function applyBatch(input: IngestBatchInput): BankWebhookResponse {
    const batchId = newId('bat');
    const at = input.receivedAt.toISOString();
    const { partnerId } = input;
    insertBatch.run(
      batchId,
      partnerId,
      at,
      input.businessDate,
      input.contentType,
      input.bodySha256,
      input.records.length,
    );
    // Each orderno's first record creates its posting unless one is stored: all go in first, in batch
    // order. Every other record (its orderno stored, or seen earlier in the batch) is then judged one by
    // one, in order, against what the records before it left: a record's judgement depends only on its
    // own orderno's postings, so these are the judgements of one record at a time (decision 204).
    const firsts: [PreparedRecord, number][] = [];
    const seen = new Set<string>();
    input.records.forEach((record, index) => {
      if (seen.has(record.orderno)) return;
      seen.add(record.orderno);
      firsts.push([record, index]);
    });
    const created = insertPostings(firsts, partnerId, batchId, at);
    const creator = new Map<string, number>();
    for (const [record, index] of firsts) if (created.has(record.orderno)) creator.set(record.orderno, index);
    const results = input.records.map((record, index): BankRecordResult => {
      if (creator.get(record.orderno) === index)
        return { index, orderno: record.orderno, outcome: 'accepted', status: record.status };
      return judge(record, index, batchId, at, partnerId, input.businessDate);
    });
    const summary = { records: results.length, accepted: 0, duplicate: 0, updated: 0, conflict: 0 };
    for (const result of results) summary[result.outcome] += 1;
    const response: BankWebhookResponse = {
      batch_id: batchId,
      received_at: at,
      has_conflicts: summary.conflict > 0,
      summary,
      results,
    };
    const { accepted, duplicate, updated, conflict } = summary;
    // prettier-ignore
    finishBatch.run(input.body, input.bodyEncoding ?? null, accepted, duplicate, updated, conflict,
      JSON.stringify(response), batchId);
    // The work this batch causes commits with it (transactional outbox): the pipeline normalises it.
    if (accepted + updated > 0) writeOutbox(NORMALISE_QUEUE, normaliseJobId(batchId), { batchId }, at);
    return response;
  }

  // Batches share the connection's group commit (decision 201): each in a savepoint of its own, weighing
  // its records, so one fsync serves the batches that arrive together and a failing one is undone alone.
  const inGroup = groupCommitter(db);

  return {
    /**
     * Archives the body and judges every record in order. Resolves once the batch is durably committed;
     * rejects with nothing of it stored. Batches arriving together share one transaction (group commit).
     */
    ingestBatch(input: IngestBatchInput): Promise<BankWebhookResponse> {
      return inGroup(() => applyBatch(input), undefined, Math.max(1, input.records.length));
    },

    /** The stored posting with every version, or undefined. */
    async get(partnerId: string, orderno: string): Promise<StoredPosting | undefined> {
      const posting = db
        .prepare<[string, string], Omit<StoredPosting, 'versions'> & { batchId: string; createdAt: string }>(
          `SELECT id, orderno, bank_agency AS bankAgency, route, agency_code AS agencyCode, status,
             amount_sen AS amountSen, name, email, time_raw AS timeRaw, time_utc AS timeUtc,
             business_date AS businessDate, record, version, first_batch_id AS batchId, created_at AS createdAt
           FROM bank_postings WHERE partner_id = ? AND orderno = ?`,
        )
        .get(partnerId, orderno);
      if (!posting) return undefined;
      const { batchId, createdAt, ...fields } = posting;
      const versions =
        posting.version === 1
          ? [{ version: 1, status: posting.status, batchId, receivedAt: createdAt }]
          : db
              .prepare<[number], StoredPosting['versions'][number]>(
                `SELECT version, status, batch_id AS batchId, received_at AS receivedAt
                 FROM bank_posting_versions WHERE posting_id = ? ORDER BY version`,
              )
              .all(posting.id);
      return { ...fields, versions };
    },

    /** Counts for tests and ops: postings, versions (of every posting) and archived batches. */
    async counts(): Promise<{ postings: number; versions: number; batches: number; anomalies: number }> {
      const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
      return {
        postings: count('SELECT count(*) AS n FROM bank_postings'),
        versions: count('SELECT coalesce(sum(version), 0) AS n FROM bank_postings'),
        batches: count('SELECT count(*) AS n FROM webhook_batches'),
        anomalies: count('SELECT count(*) AS n FROM anomalies'),
      };
    },
  };
}
