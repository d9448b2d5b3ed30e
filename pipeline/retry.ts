import type { JobsOptions } from 'bullmq';
import type { Config } from '../core/config.ts';
import { jobFor } from './jobs/index.ts';
import { PermanentJobError, type JobRetryOptions } from './jobs/types.ts';

/**
 * The one retry policy of the pipeline, for both runtimes: exponential backoff from a base delay, capped,
 * over a horizon sized to real outages (hours). A job that exhausts even the horizon is not dropped: it
 * shows as failed and is re-driven every `maxMs` (the BullMQ reconciler, or the in-process runtime). A
 * job that can never succeed (PermanentJobError) is failed at once. Each job gives only its parameters
 * (JobRetryOptions: its horizon); the rest is written here once.
 */
export interface RetryPolicy {
  baseMs: number;
  maxMs: number;
  horizonMs: number;
  /** Attempts that fit in the horizon, counting each delay at its shortest (jitter only shortens). */
  attempts: number;
}

/** Custom BullMQ backoff type, computed by `delayBefore` in the workers. */
export const BACKOFF_TYPE = 'amil-capped';

/** The backoff delay before attempt `attemptsMade + 1`, without jitter. */
function plainDelay(baseMs: number, maxMs: number, attemptsMade: number): number {
  return Math.min(baseMs * 2 ** Math.min(attemptsMade - 1, 40), maxMs);
}

/** Queues no job handles (a row of a removed job) retry like normalise jobs until they fail. */
const UNKNOWN_QUEUE: JobRetryOptions = { horizonMs: (pipeline) => pipeline.retryHorizonMs.normalise };

/** The policy of one queue: the pipeline's delays over its job's horizon. */
export function retryPolicyFor(config: Config, queue: string): RetryPolicy {
  const { retryBaseMs: baseMs, retryMaxMs: maxMs } = config.pipeline;
  const horizonMs = (jobFor(queue)?.retry ?? UNKNOWN_QUEUE).horizonMs(config.pipeline);
  let attempts = 1;
  // Jitter takes up to a fifth off a delay, so count each at 80%: the horizon is at least reached.
  for (let spent = 0; spent < horizonMs; attempts += 1) spent += 0.8 * plainDelay(baseMs, maxMs, attempts);
  return { baseMs, maxMs, horizonMs, attempts };
}

/** How long to wait after `attemptsMade` failed attempts: doubling, capped, minus up to 20% jitter. */
export function delayBefore(policy: RetryPolicy, attemptsMade: number): number {
  return Math.round(plainDelay(policy.baseMs, policy.maxMs, attemptsMade) * (1 - 0.2 * Math.random()));
}

/**
 * What follows failed attempt number `attemptsMade`: tried again at `retryAt`; or shown failed, and then
 * re-driven at `retryAt` when it only ran out of horizon, never (no `retryAt`) when it can never succeed.
 * The in-process runtime records this on the outbox row; BullMQ gets the same from jobOptionsFor (attempts,
 * backoff), UnrecoverableError and the reconciler (redriveAt).
 */
export function afterFailure(
  policy: RetryPolicy,
  attemptsMade: number,
  error: unknown,
  now: Date,
): { retryAt: Date | undefined; failed: boolean } {
  if (error instanceof PermanentJobError) return { retryAt: undefined, failed: true };
  if (attemptsMade >= policy.attempts) return { retryAt: redriveAt(policy, now), failed: true };
  return { retryAt: new Date(now.getTime() + delayBefore(policy, attemptsMade)), failed: false };
}

/** When a job failed past its horizon is tried again: one maximum interval after it failed. */
export function redriveAt(policy: RetryPolicy, failedAt: Date): Date {
  return new Date(failedAt.getTime() + policy.maxMs);
}

/** BullMQ options of a job of `queue`: the policy's attempts and backoff; failed jobs are kept (visible). */
export function jobOptionsFor(config: Config, queue: string): JobsOptions {
  return {
    attempts: retryPolicyFor(config, queue).attempts,
    backoff: { type: BACKOFF_TYPE },
    removeOnComplete: { age: 7 * 24 * 3600, count: 10_000 },
    removeOnFail: false,
  };
}
