import type { Deps } from '../core/deps.ts';

/** A job that failed for good, awaiting ops. */
export interface FailedJob {
  queue: string;
  jobId: string;
  attempts: number;
  error: string;
}

export interface QueueCounts {
  queue: string;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
}

/**
 * The pipeline as a process runs it: in-process (embedded mode) or on BullMQ. Both run the same job
 * processors fed from the same outbox, so one test suite covers both.
 */
export interface PipelineRuntime {
  readonly kind: 'in-process' | 'bullmq';
  start(): void;
  /** Stops taking work and lets the jobs in flight finish (or hands them back). */
  stop(): Promise<void>;
  /** Runs until nothing is ready: for tests, replays and the CLI. */
  drain(): Promise<void>;
  counts(): Promise<QueueCounts[]>;
  failed(): Promise<FailedJob[]>;
  /** Puts failed jobs (of one queue, or all) back in line; returns how many. */
  retryFailed(queue?: string): Promise<number>;
}

export type RuntimeFactory = (deps: Deps) => PipelineRuntime;
