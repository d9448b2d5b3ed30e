import type { Deps } from '../../core/deps.ts';
import { TEST_SINK } from '../../core/store/index.ts';
import { PermanentJobError, type JobDefinition } from './types.ts';

export interface LedgerData {
  batchId: string;
  sink: string;
}

const PREFIX = 'ledger-';

/** Each sink has a queue of its own, so a failure or backlog for one agency never holds back another. */
export function ledgerQueue(sink: string): string {
  return `${PREFIX}${sink === TEST_SINK ? 'test' : sink}`;
}

/** Appends a batch's normalised versions to one sink's ledger. */
export const ledgerJob: JobDefinition<LedgerData> = {
  name: 'ledger',
  handles: (queue) => queue.startsWith(PREFIX),
  async process(data: LedgerData, deps: Deps): Promise<void> {
    if (typeof data.batchId !== 'string' || typeof data.sink !== 'string') {
      throw new PermanentJobError('ledger needs a batchId and a sink');
    }
    await deps.store.pipeline.appendLedgerFromBatch(data.batchId, data.sink, deps.clock.now());
  },
};
