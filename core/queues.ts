import { TEST_SINK } from './store/ledger.ts';

/**
 * Every queue of the pipeline and the job id of each job, in one place: the store writes outbox rows
 * under these names (in the transaction of the fact that causes them) and the pipeline runs them.
 *
 * A job id is the idempotency key of its outbox row (`UNIQUE (job_id)`) and BullMQ's second guard. BullMQ
 * refuses a custom id with a `:` unless it has exactly two (the old repeatable jobs' form), so ids use dots
 * (test/pipeline/outbox-relay.test.ts adds every kind to a real Redis). Callbacks have no job id: their own
 * rows are their queue (decision 264).
 */

/** Normalises a stored webhook batch (one job per batch). */
export const NORMALISE_QUEUE = 'normalise';
/** Delivers one merchant callback attempt. */
export const CALLBACK_QUEUE = 'callbacks';
/** Runs the reconciliation of every sink for one business day. */
export const RECON_NIGHTLY_QUEUE = 'recon-nightly';
/** E-mails one run's workbook. */
export const RECON_EMAIL_QUEUE = 'recon-email';
/** E-mails a payer the receipt of one order. */
export const RECEIPT_QUEUE = 'receipts';

const LEDGER_PREFIX = 'ledger-';

/** Each sink has a ledger queue of its own, so a failure or backlog for one agency never holds back another. */
export function ledgerQueue(sink: string): string {
  return `${LEDGER_PREFIX}${sink === TEST_SINK ? 'test' : sink}`;
}

/** Whether a queue is one sink's ledger queue. */
export function isLedgerQueue(queue: string): boolean {
  return queue.startsWith(LEDGER_PREFIX);
}

/** A batch is normalised once. */
export const normaliseJobId = (batchId: string): string => `normalise.${batchId}`;

/** A batch's share of one sink is appended to that sink's ledger once. */
export const ledgerJobId = (sink: string, batchId: string): string => `${ledgerQueue(sink)}.${batchId}`;

/** A day's nightly run is queued once. */
export const reconNightlyJobId = (day: string): string => `${RECON_NIGHTLY_QUEUE}.${day}`;

/** A run is mailed once. */
export const reconEmailJobId = (runId: number): string => `recon-email.${runId}`;
/** A re-mail of a run is keyed by how many of its e-mails were sent when it was asked for. */
export const reconRemailJobId = (runId: number, sentBefore: number): string =>
  `${reconEmailJobId(runId)}.again.${sentBefore + 1}`;

/** An order has one receipt. */
export const receiptJobId = (orderNo: string): string => `receipt.${orderNo}`;
