import { createHash } from 'node:crypto';
import type { IngestBatchInput, PreparedRecord } from '../../core/store/bank-postings.ts';
import type { BatchVersion, NormalisedVersion } from '../../core/store/ledger.ts';

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

/**
 * The normalise job's rows for a batch's versions, with fixed payer values (the store tests are about the
 * store, not the rules), `overrides` applied to each.
 */
export function normalisedRows(
  versions: readonly BatchVersion[],
  batchId: string,
  overrides: Partial<NormalisedVersion> = {},
): NormalisedVersion[] {
  return versions.map((v) => ({
    ...v,
    batchId,
    orderno: 'x',
    bankAgency: 'BANKLZS',
    status: 'success',
    amountSen: 15050,
    name: 'Nur',
    email: 'n@example.my',
    dataEmail: null,
    timeUtc: '2026-11-20T01:15:23.000Z',
    zakatName: null,
    icNo: '850312105432',
    phone: null,
    state: 'selangor',
    typeRaw: null,
    type: 'zakat_pendapatan',
    year: '2026',
    address: null,
    postcode: null,
    city: null,
    zakatAmountSen: 15050,
    rateSen: null,
    dependants: null,
    exceptions: ['EMAIL_MISMATCH'],
    ...overrides,
  }));
}
