import type { Deps } from '../../core/deps.ts';
import { NORMALISE_QUEUE, ledgerJobId, ledgerQueue } from '../../core/queues.ts';
import type { BankTransaction } from '../../schemas/index.ts';
import { normaliseRecord } from '../normalise/rules.ts';
import { PermanentJobError, type JobDefinition } from './types.ts';

export interface NormaliseData {
  batchId: string;
}

/**
 * Normalises every posting version a stored webhook batch brought in (one job per batch, not per record),
 * then hands each sink's share to that sink's ledger queue, in the same transaction.
 */
export const normaliseJob: JobDefinition<NormaliseData> = {
  name: NORMALISE_QUEUE,
  handles: (queue) => queue === NORMALISE_QUEUE,
  async process(data: NormaliseData, deps: Deps): Promise<void> {
    if (typeof data.batchId !== 'string') throw new PermanentJobError('normalise needs a batchId');
    const versions = await deps.store.ledger.batchVersions(data.batchId);
    // Only batches that stored something get this job, so nothing found means a wrong batch id.
    if (versions.length === 0) throw new PermanentJobError(`batch ${data.batchId} brought in no postings`);
    // Object.assign rather than a spread: copying 20-odd fields per record was a third of this job's time.
    const rows = versions.map((v) =>
      Object.assign(normaliseRecord(JSON.parse(v.record) as BankTransaction), {
        postingId: v.postingId,
        version: v.version,
        batchId: data.batchId,
        sink: v.sink,
        receivedDate: v.receivedDate,
        // The posting's business day stays that of its first version, even when this one's time moved.
        businessDate: v.businessDate,
      }),
    );
    const sinks = [...new Set(rows.map((r) => r.sink))].sort();
    const jobs = sinks.map((sink) => ({
      queue: ledgerQueue(sink),
      jobId: ledgerJobId(sink, data.batchId),
      payload: { batchId: data.batchId, sink },
    }));
    await deps.store.ledger.saveNormalised(rows, jobs, deps.clock.now());
  },
};
