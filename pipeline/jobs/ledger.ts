import type { Deps } from '../../core/deps.ts';
import { isLedgerQueue } from '../../core/queues.ts';
import { PermanentJobError, type JobDefinition } from './types.ts';

export interface LedgerData {
  batchId: string;
  sink: string;
}

/** Appends a batch's normalised versions to one sink's ledger. */
export const ledgerJob: JobDefinition<LedgerData> = {
  name: 'ledger',
  handles: isLedgerQueue,
  async process(data: LedgerData, deps: Deps): Promise<void> {
    if (typeof data.batchId !== 'string' || typeof data.sink !== 'string') {
      throw new PermanentJobError('ledger needs a batchId and a sink');
    }
    await deps.store.ledger.appendFromBatch(data.batchId, data.sink, deps.clock.now());
  },
};
