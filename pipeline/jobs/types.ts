import type { Deps } from '../../core/deps.ts';

/**
 * A job: its queue (or a queue-name test for families like `ledger-<sink>`) and a plain process(data,
 * deps) that tests call directly. Every job may run twice and must converge: idempotency lives in SQLite.
 */
export interface JobDefinition<T> {
  name: string;
  handles(queue: string): boolean;
  /** Jobs of one queue run at once (default 1: in order). */
  concurrency?: number;
  process(data: T, deps: Deps): Promise<void>;
}

/** Thrown for a job that can never succeed (bad payload); it is failed at once, not retried. */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';
}
