import type { JobsOptions } from 'bullmq';
import { PIPELINE_JOB_NAMES, type Config } from '../core/config.ts';
import { jobFor } from './jobs/index.ts';

/**
 * The one retry policy of the pipeline, for both runtimes: exponential backoff from a base delay, capped,
 * over a horizon sized to real outages (hours). A job that exhausts even the horizon is not dropped: it
 * shows as failed and is re-driven every `maxMs` (the BullMQ reconciler, or the in-process relay).
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

/** The policy of one queue (its job's horizon; unknown queues get the normalise one). */
export function retryPolicyFor(config: Config, queue: string): RetryPolicy {
  const { retryBaseMs: baseMs, retryMaxMs: maxMs, retryHorizonMs } = config.pipeline;
  const job = PIPELINE_JOB_NAMES.find((n) => n === jobFor(queue)?.name) ?? 'normalise';
  const horizonMs = retryHorizonMs[job];
  let attempts = 1;
  // Jitter takes up to a fifth off a delay, so count each at 80%: the horizon is at least reached.
  for (let spent = 0; spent < horizonMs; attempts += 1) spent += 0.8 * plainDelay(baseMs, maxMs, attempts);
  return { baseMs, maxMs, horizonMs, attempts };
}

/** How long to wait after `attemptsMade` failed attempts: doubling, capped, minus up to 20% jitter. */
export function delayBefore(policy: RetryPolicy, attemptsMade: number): number {
  return Math.round(plainDelay(policy.baseMs, policy.maxMs, attemptsMade) * (1 - 0.2 * Math.random()));
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
