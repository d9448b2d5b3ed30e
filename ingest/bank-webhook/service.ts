import type { BankWebhookRequest, BankWebhookResponse } from '../../schemas/index.ts';
import type { Deps } from '../../core/deps.ts';
import { sha256Hex } from '../../core/canonical-json.ts';
import type { PreparedRecord } from '../../core/store/index.ts';
import { businessDate } from '../../core/time.ts';
import { prepareRecord } from './prepare.ts';
import { archivedForm } from './prepare-batch.ts';
import { checkTimeWindow } from './time-window.ts';

export interface BankBatch {
  partnerId: string;
  contentType: string;
  body: Buffer;
  request: BankWebhookRequest;
}

/** A batch already read, checked and prepared (the webhook route's, off the request thread). */
export interface PreparedBankBatch {
  partnerId: string;
  contentType: string;
  body: Buffer;
  bodySha256: string;
  /** The body gzip-compressed, when the archive keeps it so (decision 203). */
  bodyGzip?: Buffer;
  receivedAt: Date;
  records: readonly PreparedRecord[];
}

/** Stores a schema-valid batch in one transaction and reports each record's outcome. */
export async function ingestBankBatch(deps: Deps, batch: BankBatch): Promise<BankWebhookResponse> {
  const receivedAt = deps.clock.now();
  checkTimeWindow(batch.request.transactions, receivedAt, deps.config.webhook);
  return storeBankBatch(deps, {
    partnerId: batch.partnerId,
    contentType: batch.contentType,
    body: batch.body,
    bodySha256: sha256Hex(batch.body),
    ...archivedForm(batch.body),
    receivedAt,
    records: batch.request.transactions.map((tx) => prepareRecord(tx, deps.config.webhook.routes)),
  });
}

/** Stores a prepared batch in one transaction and reports each record's outcome. */
export async function storeBankBatch(deps: Deps, batch: PreparedBankBatch): Promise<BankWebhookResponse> {
  const response = await deps.store.bankPostings.ingestBatch({
    partnerId: batch.partnerId,
    receivedAt: batch.receivedAt,
    businessDate: businessDate(batch.receivedAt),
    contentType: batch.contentType,
    // The archive keeps the gzip when there is one; its readers give back the bytes as received.
    ...(batch.bodyGzip ? { body: batch.bodyGzip, bodyEncoding: 'gzip' as const } : { body: batch.body }),
    bodySha256: batch.bodySha256,
    records: batch.records,
  });
  deps.metrics.webhookRecords(response.summary);
  return response;
}
