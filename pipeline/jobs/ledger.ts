import type { Deps } from '../../core/deps.ts';
import { isLedgerQueue, ledgerJobId } from '../../core/queues.ts';
import type { LedgerJob } from '../../schemas/index.ts';
import type { JobDefinition } from './types.ts';

/** Appends a batch's normalised versions to one sink's ledger. */
export const ledgerJob: JobDefinition<LedgerJob> = {
  name: 'ledger',
  handles: isLedgerQueue,
  jobId: ledgerJobId,
  payloadSchema: 'https://schemas.amil.my/jobs/ledger-job.json',
  retry: { horizonMs: (pipeline) => pipeline.retryHorizonMs.ledger },
  async process(data: LedgerJob, deps: Deps): Promise<void> {
    await deps.store.ledger.appendFromBatch(data.batchId, data.sink, deps.clock.now());
  },
};
