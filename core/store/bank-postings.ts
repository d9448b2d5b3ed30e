import type { Db } from './db.ts';
import { newId } from '../ids.ts';
import type { BankRecordResult, BankWebhookResponse } from '../../schemas/index.ts';

export type PostingStatus = 'success' | 'pending' | 'failed';

/** A validated webhook record with what the store needs already derived from it. */
export interface PreparedRecord {
  orderno: string;
  bankAgency: string;
  route: 'agency' | 'test';
  agencyCode: string | null;
  status: PostingStatus;
  amountSen: number;
  name: string;
  email: string;
  timeRaw: string;
  timeUtc: string;
  businessDate: string;
  /** The `data` object as JSON text. */
  data: string;
  /** The whole record as canonical JSON (keys sorted): what "identical" means. */
  canonical: string;
  sha256: string;
  /** Canonical JSON of the record without `status` and `time`: what must not change in an update. */
  identity: string;
}

export interface IngestBatchInput {
  partnerId: string;
  receivedAt: Date;
  businessDate: string;
  contentType: string;
  body: Buffer;
  bodySha256: string;
  records: readonly PreparedRecord[];
}

/** A stored posting as read back, with its version history. */
export interface StoredPosting {
  id: number;
  orderno: string;
  bankAgency: string;
  route: 'agency' | 'test';
  agencyCode: string | null;
  status: PostingStatus;
  amountSen: number;
  name: string;
  email: string;
  timeRaw: string;
  timeUtc: string;
  businessDate: string;
  data: string;
  version: number;
  versions: { version: number; status: PostingStatus; batchId: string; receivedAt: string }[];
}

interface CurrentPosting {
  id: number;
  status: PostingStatus;
  version: number;
  record: string;
  identity: string;
}

/** Bank postings: the batch ingest and its reads. */
export function bankPostingsRepository(db: Db) {
  const insertBatch = db.prepare(
    `INSERT INTO webhook_batches (id, partner_id, received_at, business_date, content_type, body, sha256, record_count)
     VALUES (@id, @partnerId, @receivedAt, @businessDate, @contentType, @body, @sha256, @recordCount)`,
  );
  const finishBatch = db.prepare(
    `UPDATE webhook_batches SET accepted = @accepted, duplicate = @duplicate, updated = @updated,
       conflict = @conflict, response = @response WHERE id = @id`,
  );
  const selectCurrent = db.prepare<[string, string], Omit<CurrentPosting, 'identity'>>(
    `SELECT p.id, p.status, p.version, v.record
     FROM bank_postings p JOIN bank_posting_versions v ON v.posting_id = p.id AND v.version = p.version
     WHERE p.partner_id = ? AND p.orderno = ?`,
  );
  const selectVersionBySha = db.prepare<[number, string], { version: number }>(
    `SELECT version FROM bank_posting_versions WHERE posting_id = ? AND content_sha256 = ?`,
  );
  const insertPosting = db.prepare(
    `INSERT INTO bank_postings (partner_id, orderno, bank_agency, route, agency_code, status, amount_sen, name,
       email, time_raw, time_utc, business_date, data, version, first_batch_id, created_at, updated_at)
     VALUES (@partnerId, @orderno, @bankAgency, @route, @agencyCode, @status, @amountSen, @name,
       @email, @timeRaw, @timeUtc, @businessDate, @data, 1, @batchId, @at, @at)`,
  );
  const insertVersion = db.prepare(
    `INSERT INTO bank_posting_versions (posting_id, version, content_sha256, record, status, batch_id,
       record_index, received_at)
     VALUES (@postingId, @version, @sha256, @record, @status, @batchId, @index, @at)`,
  );
  const updateStatus = db.prepare(
    `UPDATE bank_postings SET status = @status, version = @version, updated_at = @at WHERE id = @id`,
  );
  const upsertAnomaly = db.prepare<Record<string, unknown>, { id: string }>(
    `INSERT INTO anomalies (id, kind, posting_id, orderno, reason, stored_version, stored_record,
       incoming_record, incoming_sha256, first_batch_id, first_seen_at, last_seen_at, business_date)
     VALUES (@id, 'bank_conflict', @postingId, @orderno, @reason, @storedVersion, @storedRecord,
       @incomingRecord, @incomingSha256, @batchId, @at, @at, @businessDate)
     ON CONFLICT (posting_id, incoming_sha256)
       DO UPDATE SET last_seen_at = excluded.last_seen_at, seen_count = seen_count + 1
     RETURNING id`,
  );

  function judge(
    record: PreparedRecord,
    index: number,
    batchId: string,
    at: string,
    partnerId: string,
  ): BankRecordResult {
    const base = { index, orderno: record.orderno };
    const current = selectCurrent.get(partnerId, record.orderno);
    if (!current) {
      const { lastInsertRowid } = insertPosting.run({ ...record, partnerId, batchId, at });
      insertVersion.run({
        postingId: lastInsertRowid,
        version: 1,
        sha256: record.sha256,
        record: record.canonical,
        status: record.status,
        batchId,
        index,
        at,
      });
      return { ...base, outcome: 'accepted', status: record.status };
    }
    if (selectVersionBySha.get(current.id, record.sha256)) {
      return { ...base, outcome: 'duplicate', status: current.status };
    }
    const reason = transitionRefusal(current, record);
    if (reason === undefined) {
      const version = current.version + 1;
      insertVersion.run({
        postingId: current.id,
        version,
        sha256: record.sha256,
        record: record.canonical,
        status: record.status,
        batchId,
        index,
        at,
      });
      updateStatus.run({ id: current.id, status: record.status, version, at });
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
      businessDate: record.businessDate,
    });
    return { ...base, outcome: 'conflict', status: current.status, anomaly_id: anomaly?.id ?? '' };
  }

  return {
    /**
     * Archives the body and judges every record in order, in one immediate transaction: on return the
     * whole batch is durably committed; on a throw nothing of it is.
     */
    async ingestBatch(input: IngestBatchInput): Promise<BankWebhookResponse> {
      const batchId = newId('bat');
      const at = input.receivedAt.toISOString();
      return db
        .transaction((): BankWebhookResponse => {
          insertBatch.run({
            id: batchId,
            partnerId: input.partnerId,
            receivedAt: at,
            businessDate: input.businessDate,
            contentType: input.contentType,
            body: input.body,
            sha256: input.bodySha256,
            recordCount: input.records.length,
          });
          const results = input.records.map((record, index) =>
            judge(record, index, batchId, at, input.partnerId),
          );
          const summary = { records: results.length, accepted: 0, duplicate: 0, updated: 0, conflict: 0 };
          for (const result of results) summary[result.outcome] += 1;
          const response: BankWebhookResponse = {
            batch_id: batchId,
            received_at: at,
            has_conflicts: summary.conflict > 0,
            summary,
            results,
          };
          finishBatch.run({ id: batchId, ...summary, response: JSON.stringify(response) });
          return response;
        })
        .immediate();
    },

    /** The stored posting with every version, or undefined. */
    async get(partnerId: string, orderno: string): Promise<StoredPosting | undefined> {
      const posting = db
        .prepare<[string, string], Omit<StoredPosting, 'versions'>>(
          `SELECT id, orderno, bank_agency AS bankAgency, route, agency_code AS agencyCode, status,
             amount_sen AS amountSen, name, email, time_raw AS timeRaw, time_utc AS timeUtc,
             business_date AS businessDate, data, version
           FROM bank_postings WHERE partner_id = ? AND orderno = ?`,
        )
        .get(partnerId, orderno);
      if (!posting) return undefined;
      const versions = db
        .prepare<[number], StoredPosting['versions'][number]>(
          `SELECT version, status, batch_id AS batchId, received_at AS receivedAt
           FROM bank_posting_versions WHERE posting_id = ? ORDER BY version`,
        )
        .all(posting.id);
      return { ...posting, versions };
    },

    /** Counts for tests and ops: postings, versions and archived batches. */
    async counts(): Promise<{ postings: number; versions: number; batches: number; anomalies: number }> {
      const count = (table: string) =>
        (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      return {
        postings: count('bank_postings'),
        versions: count('bank_posting_versions'),
        batches: count('webhook_batches'),
        anomalies: count('anomalies'),
      };
    },

    /** Archived webhook bodies received on a business day, oldest first. */
    async archivedBatches(businessDate: string) {
      return db
        .prepare<
          [string],
          { id: string; receivedAt: string; sha256: string; recordCount: number; body: Buffer }
        >(
          `SELECT id, received_at AS receivedAt, sha256, record_count AS recordCount, body
           FROM webhook_batches WHERE business_date = ? ORDER BY received_at, id`,
        )
        .all(businessDate);
    },
  };
}

/**
 * Why an incoming version may not replace the stored one, or undefined when it may: only a `pending`
 * posting may move, only to `success` or `failed` (spec section 3), and nothing but `status` and `time`
 * may change with it.
 */
function transitionRefusal(
  current: Omit<CurrentPosting, 'identity'>,
  incoming: PreparedRecord,
): string | undefined {
  if (current.status !== 'pending') return `stored status is ${current.status}, which is final`;
  if (incoming.status === 'pending') return 'a pending posting was resent with different details';
  if (identityOf(current.record) !== incoming.identity) {
    return `status ${current.status} -> ${incoming.status} also changes fields other than status and time`;
  }
  return undefined;
}

/** Canonical JSON of a stored record without `status` and `time`. */
export function identityOf(canonicalRecord: string): string {
  const { status: _status, time: _time, ...rest } = JSON.parse(canonicalRecord) as Record<string, unknown>;
  return JSON.stringify(rest);
}
