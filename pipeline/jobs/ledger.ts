import type { Deps } from '../../core/deps.ts';
import { isLedgerQueue, ledgerJobId } from '../../core/queues.ts';
import type { LedgerJob } from '../../schemas/index.ts';
import type { JobContext, JobDefinition, JobOutcome } from './types.ts';

/**
 * Appends a batch's normalised versions to one sink's ledger, completing the job's outbox row in the same
 * transaction (issue 17): the append and its completion are both committed or both not.
 */
export const ledgerJob: JobDefinition<LedgerJob> = {
  name: 'ledger',
  handles: isLedgerQueue,
  jobId: ledgerJobId,
  payloadSchema: 'https://schemas.amil.my/jobs/ledger-job.json',
  retry: { horizonMs: (pipeline) => pipeline.retryHorizonMs.ledger },
  async process(data: LedgerJob, deps: Deps, context?: JobContext): Promise<JobOutcome> {
    await deps.store.ledger.appendFromBatch(data.batchId, data.sink, deps.clock.now(), context?.completes);
    return { outboxCompleted: context?.completes !== undefined };
  },
};
