import type { Config } from '../../core/config.ts';
import { sha256Hex } from '../../core/canonical-json.ts';
import type { PreparedRecord } from '../../core/store/index.ts';
import type { BatchValidator } from '../../schemas/index.ts';
import { prepareRecord } from './prepare.ts';
import { readBatchBody } from './read.ts';
import { checkTimeWindow } from './time-window.ts';

/** What judging a body needs besides the body: the webhook settings and the compiled batch schema. */
export interface BatchRules {
  validate: BatchValidator;
  webhook: Pick<Config['webhook'], 'maxRecords' | 'routes' | 'timePastDays' | 'timeFutureMinutes'>;
}

/** A body ready for the store: its records prepared in order, and the body's SHA-256 for the archive. */
export interface PreparedBatch {
  records: PreparedRecord[];
  bodySha256: string;
}

/**
 * Everything the webhook does to a body before the store, in the order its refusals are checked: JSON
 * (400), record count (413), schema (422), time window (422); then each record prepared. Pure CPU work,
 * so it runs the same on the request thread or a worker thread; refusals are thrown as DomainError.
 */
export function prepareBatch(body: Buffer, receivedAt: Date, rules: BatchRules): PreparedBatch {
  const request = readBatchBody(body, rules.validate, rules.webhook.maxRecords);
  checkTimeWindow(request.transactions, receivedAt, rules.webhook);
  return {
    records: request.transactions.map((tx) => prepareRecord(tx, rules.webhook.routes)),
    bodySha256: sha256Hex(body),
  };
}
