import type { BankWebhookRequest, BankWebhookResponse } from '../../schemas/index.ts';
import type { Deps } from '../../core/deps.ts';
import { sha256Hex } from '../../core/canonical-json.ts';
import { businessDate } from '../../core/time.ts';
import { prepareRecord } from './prepare.ts';
import { checkTimeWindow } from './time-window.ts';

export interface BankBatch {
  partnerId: string;
  contentType: string;
  body: Buffer;
  request: BankWebhookRequest;
}

/** Stores a schema-valid batch in one transaction and reports each record's outcome. */
export async function ingestBankBatch(deps: Deps, batch: BankBatch): Promise<BankWebhookResponse> {
  const receivedAt = deps.clock.now();
  checkTimeWindow(batch.request.transactions, receivedAt, deps.config.webhook);
  const records = batch.request.transactions.map((tx) => prepareRecord(tx, deps.config.webhook.routes));
  const response = await deps.store.bankPostings.ingestBatch({
    partnerId: batch.partnerId,
    receivedAt,
    businessDate: businessDate(receivedAt),
    contentType: batch.contentType,
    body: batch.body,
    bodySha256: sha256Hex(batch.body),
    records,
  });
  deps.metrics.webhookRecords(response.summary);
  return response;
}
