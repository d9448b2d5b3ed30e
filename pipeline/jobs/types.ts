import type { Config } from '../../core/config.ts';
import type { Deps } from '../../core/deps.ts';
import type { OutboxCompletion } from '../../core/store/index.ts';

/** A job's parameters of the one retry policy (pipeline/retry.ts). */
export interface JobRetryOptions {
  /** How long a failing job keeps retrying before it shows as failed (PIPELINE_RETRY_HORIZONS). */
  horizonMs(pipeline: Config['pipeline']): number;
}

/**
 * A job, declared once and run by both runtimes: its queue (or a test for a family of queues, a ledger
 * queue per sink), the job id its rows carry, the JSON Schema of its payload, its retry parameters, and a
 * plain process(data, deps) that tests call directly. Every job may run twice and must converge:
 * idempotency lives in the store.
 */
export interface JobDefinition<T> {
  name: string;
  handles(queue: string): boolean;
  /** The job id of one of its rows (core/queues.ts): the outbox's idempotency key. */
  jobId: (...args: never[]) => string;
  /** The $id of its payload's schema (schemas/jobs/): a payload that fails it fails the job at once. */
  payloadSchema: string;
  retry: JobRetryOptions;
  /** Jobs of one queue run at once (default 1: in order). */
  concurrency?: number;
  process(data: T, deps: Deps, context?: JobContext): Promise<JobOutcome | void>;
}

/** What the runtime tells a run: the outbox row it completes, for a job that completes it in its own write. */
export interface JobContext {
  completes?: OutboxCompletion;
}

/** A job that completed its outbox row in its own last write says so: the runtime then writes nothing. */
export interface JobOutcome {
  outboxCompleted: boolean;
}

/** Thrown for a job that can never succeed (bad payload); it is failed at once, not retried. */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';
}

/**
 * Thrown for a job whose work another attempt holds (a receipt leased by an attempt still sending, or by one
 * that died with its lease): retried on the policy like any failure, but nothing failed, so it is logged as
 * a wait (info), not as a failure (warn). After a database crash every such retry was a "job failed" line.
 */
export class BusyJobError extends Error {
  override name = 'BusyJobError';
}
