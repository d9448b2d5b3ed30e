import { createHash } from 'node:crypto';
import type { IngestBatchInput, PreparedRecord } from '../../core/store/bank-postings.ts';

/** When the store tests' batches arrive: 10:00 in Kuala Lumpur on their business day. */
export const BATCH_RECEIVED_AT = new Date('2026-11-20T02:00:00.000Z');

/**
 * What the webhook hands the store for `records` from the demo bank: the body as the bank would send them
 * (their canonical forms), its SHA-256, business day 2026-11-20.
 */
export function batchInput(records: PreparedRecord[], receivedAt = BATCH_RECEIVED_AT): IngestBatchInput {
  const body = Buffer.from(
    JSON.stringify({ transactions: records.map((r) => JSON.parse(r.canonical) as unknown) }),
  );
  return {
    partnerId: 'demo-bank',
    receivedAt,
    businessDate: '2026-11-20',
    contentType: 'application/json',
    body,
    bodySha256: createHash('sha256').update(body).digest('hex'),
    records,
  };
}
