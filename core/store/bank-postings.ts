import type { BankWebhookResponse } from '../../schemas/index.ts';

export type PostingStatus = 'success' | 'pending' | 'failed';

/** The columns of a posting that come straight from (or are derived from) the record. */
export interface PostingFields {
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
}

/** A validated webhook record with what the store needs already derived from it. */
export interface PreparedRecord extends PostingFields {
  /** The whole record as canonical JSON (keys sorted): what "identical" means. */
  canonical: string;
  sha256: string;
}

/** How an archived body's bytes are kept, when not as received: gzip-compressed (decision 203). */
export type BodyEncoding = 'gzip';

export interface IngestBatchInput {
  partnerId: string;
  receivedAt: Date;
  businessDate: string;
  contentType: string;
  /** The body as the archive keeps it: the bytes received, or their gzip when `bodyEncoding` says so. */
  body: Buffer;
  /** Absent: `body` is the bytes as received. */
  bodyEncoding?: BodyEncoding;
  /** The SHA-256 of the bytes as received (whatever `bodyEncoding`). */
  bodySha256: string;
  records: readonly PreparedRecord[];
}

/** A stored posting as read back, with its version history. */
export interface StoredPosting extends PostingFields {
  id: number;
  /** The current version, canonical JSON. */
  record: string;
  version: number;
  versions: { version: number; status: PostingStatus; batchId: string; receivedAt: string }[];
}

/** Bank postings: the webhook's batch ingest and its reads. */
export interface BankPostingsRepository {
  /**
   * Archives the body and judges every record in order; the normalise job commits with it (outbox).
   * Resolves once the batch is durably committed; rejects with nothing of it stored. Batches arriving
   * together may share one transaction (group commit).
   */
  ingestBatch(input: IngestBatchInput): Promise<BankWebhookResponse>;

  /** The stored posting with every version, or undefined. */
  get(partnerId: string, orderno: string): Promise<StoredPosting | undefined>;

  /** Counts for tests and ops: postings, versions (of every posting), archived batches and anomalies. */
  counts(): Promise<{ postings: number; versions: number; batches: number; anomalies: number }>;
}
