import { ledgerJob } from './ledger.ts';
import { normaliseJob } from './normalise.ts';
import { receiptJob } from './receipt.ts';
import { reconEmailJob, reconNightlyJob } from './recon.ts';
import type { JobDefinition } from './types.ts';

/** Every job of the pipeline; a queue is handled by the first that claims it. */
export const JOBS: readonly JobDefinition<never>[] = [
  normaliseJob,
  ledgerJob,
  reconNightlyJob,
  reconEmailJob,
  receiptJob,
];

export function jobFor(queue: string): JobDefinition<never> | undefined {
  return JOBS.find((job) => job.handles(queue));
}
