/**
 * Bank postings on PostgreSQL (the SQLite twin: ../bank-postings.ts): a webhook batch is archived and
 * judged in one transaction, committed before the promise resolves, and stored whole or not at all.
 * New postings go in with one INSERT ... ON CONFLICT DO NOTHING in orderno order; the records that met a
 * stored posting are then locked (FOR UPDATE, in the same order) and judged one by one. Taking row locks
 * in one order means concurrent batches wait for each other instead of deadlocking, and the unique key
 * (partner_id, orderno) decides which of two batches carrying the same new record accepts it.
 */
import type { BankRecordResult, BankWebhookResponse } from '../../../schemas/index.ts';
import { newId } from '../../ids.ts';
import { NORMALISE_QUEUE, normaliseJobId } from '../../queues.ts';
import type {
  BankPostingsRepository,
  IngestBatchInput,
  PostingStatus,
  PreparedRecord,
  StoredPosting,
} from '../bank-postings.ts';
import { transitionRefusal } from '../posting-transitions.ts';
import { writeOutbox } from './outbox.ts';
import { statement, type PgDb, type PgTx } from './pool.ts';
import { jsonParam } from './text.ts';

interface CurrentPosting {
  id: number;
  orderno: string;
  status: PostingStatus;
  version: number;
  sha256: string;
  record: string;
  batchId: string;
  recordIndex: number;
  createdAt: string;
}

const INSERT_BATCH = statement(
  `INSERT INTO webhook_batches (id, partner_id, received_at, business_date, content_type, body, sha256,
     record_count, body_encoding) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
);
const FINISH_BATCH = statement(
  `UPDATE webhook_batches SET accepted = $1, duplicate = $2, updated = $3, conflict = $4, response = $5
   WHERE id = $6`,
);
// The new postings get their ids in the bank's order (decision 204: the zakat report and the dashboard list a
// day in posting order, as on SQLite), and are inserted in orderno order, so that two batches sharing
// ordernos take their keys' locks in the same order and never deadlock (decision 276).
const INSERT_NEW = statement(
  `WITH numbered AS MATERIALIZED (
     SELECT nextval('bank_postings_id_seq') AS id, r.*
     FROM (SELECT * FROM json_to_recordset($1::json) AS r (index integer, orderno text, "bankAgency" text,
             route text, "agencyCode" text, status text, "amountSen" bigint, name text, email text,
             "timeRaw" text, "timeUtc" timestamptz, "businessDate" text, canonical text, sha256 text)
           ORDER BY index) r
   )
   INSERT INTO bank_postings (id, partner_id, orderno, bank_agency, route, agency_code, status, amount_sen,
     name, email, time_raw, time_utc, business_date, record, content_sha256, version, first_batch_id,
     first_record_index, created_at, updated_at)
   SELECT id, $2, orderno, "bankAgency", route, "agencyCode", status, "amountSen", name, email, "timeRaw",
     "timeUtc", "businessDate", canonical, sha256, 1, $3, index, $4, $4
   FROM numbered
   ORDER BY orderno
   ON CONFLICT (partner_id, orderno) DO NOTHING
   RETURNING orderno`,
);
const LOCK_EXISTING = statement(
  `SELECT id, orderno, status, version, content_sha256 AS sha256, record, first_batch_id AS "batchId",
     first_record_index AS "recordIndex", created_at AS "createdAt"
   FROM bank_postings WHERE partner_id = $1 AND orderno = ANY($2::text[])
   ORDER BY orderno FOR UPDATE`,
);
const VERSION_BY_SHA = statement(
  'SELECT version FROM bank_posting_versions WHERE posting_id = $1 AND content_sha256 = $2',
);
const INSERT_VERSION = statement(
  `INSERT INTO bank_posting_versions (posting_id, version, content_sha256, record, status, batch_id,
     record_index, received_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
);
const UPDATE_CURRENT = statement(
  `UPDATE bank_postings SET status = $1, version = $2, record = $3, content_sha256 = $4, updated_at = $5
   WHERE id = $6`,
);
const UPSERT_ANOMALY = statement(
  `INSERT INTO anomalies (id, kind, posting_id, orderno, reason, stored_version, stored_record,
     incoming_record, incoming_sha256, first_batch_id, first_seen_at, last_seen_at, business_date)
   VALUES ($1, 'bank_conflict', $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11)
   ON CONFLICT (posting_id, incoming_sha256)
     DO UPDATE SET last_seen_at = excluded.last_seen_at, seen_count = anomalies.seen_count + 1,
       status = 'open', resolved_at = NULL
   RETURNING id`,
);

/** Judges a record that met a stored posting (locked by this transaction): duplicate, update or conflict. */
async function judgeExisting(
  tx: PgTx,
  current: CurrentPosting,
  record: PreparedRecord,
  index: number,
  batchId: string,
  at: string,
  receivedDay: string,
): Promise<BankRecordResult> {
  const base = { index, orderno: record.orderno };
  const seenBefore =
    current.sha256 === record.sha256 ||
    (current.version > 1 && (await tx.row(VERSION_BY_SHA, [current.id, record.sha256])) !== undefined);
  if (seenBefore) return { ...base, outcome: 'duplicate', status: current.status };

  const reason = transitionRefusal(current, record);
  if (reason === undefined) {
    if (current.version === 1) {
      // The history starts when a posting first changes: version 1 moves there from the posting row.
      await tx.run(INSERT_VERSION, [
        current.id,
        1,
        current.sha256,
        current.record,
        current.status,
        current.batchId,
        current.recordIndex,
        current.createdAt,
      ]);
    }
    const version = current.version + 1;
    await tx.run(INSERT_VERSION, [
      current.id,
      version,
      record.sha256,
      record.canonical,
      record.status,
      batchId,
      index,
      at,
    ]);
    await tx.run(UPDATE_CURRENT, [record.status, version, record.canonical, record.sha256, at, current.id]);
    return { ...base, outcome: 'updated', status: record.status };
  }
  const anomaly = await tx.row<{ id: string }>(UPSERT_ANOMALY, [
    newId('anm'),
    current.id,
    record.orderno,
    reason,
    current.version,
    current.record,
    record.canonical,
    record.sha256,
    batchId,
    at,
    receivedDay,
  ]);
  return { ...base, outcome: 'conflict', status: current.status, anomaly_id: anomaly?.id ?? '' };
}

/** Archives one batch and judges its records; runs inside `tx`. */
async function applyBatch(tx: PgTx, input: IngestBatchInput): Promise<BankWebhookResponse> {
  const batchId = newId('bat');
  const at = input.receivedAt.toISOString();
  await tx.run(INSERT_BATCH, [
    batchId,
    input.partnerId,
    at,
    input.businessDate,
    input.contentType,
    input.body,
    input.bodySha256,
    input.records.length,
    input.bodyEncoding ?? null,
  ]);
  // Only an orderno's first record in the batch can create its posting; a later one is judged against what
  // the records before it left, as SQLite judges them one after another (a resend inside one batch is a
  // duplicate, a changed one an update), so accepted + updated counts exactly the versions stored.
  const firstIndex = new Map<string, number>();
  for (const [index, record] of input.records.entries())
    if (!firstIndex.has(record.orderno)) firstIndex.set(record.orderno, index);
  const fresh = jsonParam([...firstIndex.values()].map((index) => ({ ...input.records[index], index })));
  const inserted = new Set(
    (await tx.rows<{ orderno: string }>(INSERT_NEW, [fresh, input.partnerId, batchId, at])).map(
      (r) => r.orderno,
    ),
  );
  const createdHere = (orderno: string, index: number) =>
    inserted.has(orderno) && firstIndex.get(orderno) === index;
  const met = [...new Set(input.records.filter((r, i) => !createdHere(r.orderno, i)).map((r) => r.orderno))];
  const existing = new Map(
    met.length === 0
      ? []
      : (await tx.rows<CurrentPosting>(LOCK_EXISTING, [input.partnerId, met])).map((p) => [p.orderno, p]),
  );
  const results: BankRecordResult[] = [];
  for (const [index, record] of input.records.entries()) {
    const current = createdHere(record.orderno, index) ? undefined : existing.get(record.orderno);
    if (!current) {
      results.push({ index, orderno: record.orderno, outcome: 'accepted', status: record.status });
      continue;
    }
    const result = await judgeExisting(tx, current, record, index, batchId, at, input.businessDate);
    results.push(result);
    if (result.outcome === 'updated')
      existing.set(record.orderno, {
        ...current,
        status: record.status,
        version: current.version + 1,
        sha256: record.sha256,
        record: record.canonical,
      });
  }
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
  await tx.run(FINISH_BATCH, [accepted, duplicate, updated, conflict, JSON.stringify(response), batchId]);
  // The work this batch causes commits with it (transactional outbox): the pipeline normalises it.
  if (accepted + updated > 0)
    await writeOutbox(tx, NORMALISE_QUEUE, normaliseJobId(batchId), { batchId }, at);
  return response;
}

/** The bank postings repository over a PostgreSQL pool. */
export function pgBankPostings(db: PgDb): BankPostingsRepository {
  return {
    // PostgreSQL's own group commit shares one WAL flush among the sessions committing together, so each
    // batch is a transaction of its own (a failing batch fails alone).
    ingestBatch(input) {
      return db.transaction((tx) => applyBatch(tx, input));
    },

    async get(partnerId, orderno) {
      const posting = await db.row<Omit<StoredPosting, 'versions'> & { batchId: string; createdAt: string }>(
        `SELECT id, orderno, bank_agency AS "bankAgency", route, agency_code AS "agencyCode", status,
           amount_sen AS "amountSen", name, email, time_raw AS "timeRaw", time_utc AS "timeUtc",
           business_date AS "businessDate", record, version, first_batch_id AS "batchId",
           created_at AS "createdAt"
         FROM bank_postings WHERE partner_id = $1 AND orderno = $2`,
        [partnerId, orderno],
      );
      if (!posting) return undefined;
      const { batchId, createdAt, ...fields } = posting;
      const versions =
        posting.version === 1
          ? [{ version: 1, status: posting.status, batchId, receivedAt: createdAt }]
          : await db.rows<StoredPosting['versions'][number]>(
              `SELECT version, status, batch_id AS "batchId", received_at AS "receivedAt"
               FROM bank_posting_versions WHERE posting_id = $1 ORDER BY version`,
              [posting.id],
            );
      return { ...fields, versions };
    },

    async counts() {
      const row = await db.row<{ postings: number; versions: number; batches: number; anomalies: number }>(
        `SELECT (SELECT count(*) FROM bank_postings) AS postings,
           (SELECT coalesce(sum(version), 0) FROM bank_postings) AS versions,
           (SELECT count(*) FROM webhook_batches) AS batches,
           (SELECT count(*) FROM anomalies) AS anomalies`,
      );
      return row ?? { postings: 0, versions: 0, batches: 0, anomalies: 0 };
    },
  };
}
