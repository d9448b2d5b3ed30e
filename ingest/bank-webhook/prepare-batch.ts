import { gzipSync } from 'node:zlib';
import type { Config } from '../../core/config.ts';
import { sha256Hex } from '../../core/canonical-json.ts';
import { parseOffsetDateTime } from '../../core/time.ts';
import type { PreparedRecord } from '../../core/store/index.ts';
import type { BatchValidator } from '../../schemas/index.ts';
import { prepareRecord } from './prepare.ts';
import { readBatchBody } from './read.ts';
import { checkTimeWindow } from './time-window.ts';

/**
 * Bodies from this size are archived gzip-compressed (decision 203): the size from which they are prepared
 * on a worker thread (preparer.ts), so the compression runs there, not on the event loop.
 */
export const ARCHIVE_GZIP_MIN_BYTES = 64 * 1024;

/** What judging a body needs besides the body: the webhook settings and the compiled batch schema. */
export interface BatchRules {
  validate: BatchValidator;
  webhook: Pick<Config['webhook'], 'maxRecords' | 'routes' | 'timePastDays' | 'timeFutureMinutes'>;
}

/**
 * A body ready for the store: its records prepared in order, the body's SHA-256 for the archive, and the
 * body gzip-compressed when the archive keeps it so (ARCHIVE_GZIP_MIN_BYTES and more).
 */
export interface PreparedBatch {
  records: PreparedRecord[];
  bodySha256: string;
  bodyGzip?: Buffer;
}

/**
 * Everything the webhook does to a body before the store, in the order its refusals are checked: JSON
 * (400), record count (413), schema (422), time window (422); then each record prepared. Pure CPU work,
 * so it runs the same on the request thread or a worker thread; refusals are thrown as DomainError.
 */
export function prepareBatch(body: Buffer, receivedAt: Date, rules: BatchRules): PreparedBatch {
  const request = readBatchBody(body, rules.validate, rules.webhook.maxRecords);
  // Each record's time parsed once, for the window and for the record.
  const instants = request.transactions.map((tx) => parseOffsetDateTime(tx.time));
  checkTimeWindow(request.transactions, receivedAt, rules.webhook, instants);
  return {
    records: request.transactions.map((tx, i) => prepareRecord(tx, rules.webhook.routes, instants[i])),
    bodySha256: sha256Hex(body),
    ...archivedForm(body),
  };
}

/**
 * The gzip of a body the archive keeps compressed, or nothing (kept as received). Level 1: most of what
 * gzip saves on JSON for a fraction of the default level's time, on a thread that also prepares.
 */
export function archivedForm(body: Buffer): { bodyGzip?: Buffer } {
  return body.length < ARCHIVE_GZIP_MIN_BYTES ? {} : { bodyGzip: gzipSync(body, { level: 1 }) };
}
