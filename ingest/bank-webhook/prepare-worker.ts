/**
 * The body of a webhook worker thread (piscina): reads, checks and prepares one batch off the web
 * process's event loop. A refusal comes back as a value (an error class does not survive the thread
 * boundary) and the request thread throws it as the same DomainError.
 */
import { threadId, workerData } from 'node:worker_threads';
import { DomainError, type ErrorCode, type RecordFieldError } from '../../core/errors.ts';
import { configuredValidators } from '../../core/validators.ts';
import { prepareBatch, type BatchRules, type PreparedBatch } from './prepare-batch.ts';
import { toColumns, type RecordColumns } from './record-columns.ts';

export type WorkerSettings = BatchRules['webhook'];

export interface PrepareTask {
  body: Uint8Array;
  /** The instant the batch was received (ms since the epoch): the time window is judged against it. */
  receivedAt: number;
}

export type PrepareResult =
  | ({ ok: true; threadId: number; columns: RecordColumns } & Omit<PreparedBatch, 'records'>)
  | {
      ok: false;
      code: ErrorCode;
      detail: string | undefined;
      errors: readonly RecordFieldError[];
      headers: Readonly<Record<string, string>>;
    };

const webhook = workerData as WorkerSettings;
// Compiled once per thread, from the same configuration as the process's own validators.
const rules: BatchRules = {
  validate: configuredValidators(Object.keys(webhook.routes)).bankWebhookRequest,
  webhook,
};

/** Prepares one body; a refusal is returned, anything else thrown. */
export default function prepare(task: PrepareTask): PrepareResult {
  const body = Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength);
  try {
    const { records, ...rest } = prepareBatch(body, new Date(task.receivedAt), rules);
    return { ok: true, threadId, columns: toColumns(records), ...rest };
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return {
      ok: false,
      code: err.code,
      detail: err.detail,
      errors: err.fieldErrors,
      headers: err.extraHeaders,
    };
  }
}
