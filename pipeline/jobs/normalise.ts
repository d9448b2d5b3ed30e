import type { Deps } from '../../core/deps.ts';
import { NORMALISE_QUEUE, ledgerJobId, ledgerQueue, normaliseJobId } from '../../core/queues.ts';
import type { BankTransaction, NormaliseJob } from '../../schemas/index.ts';
import { normaliseRecord } from '../normalise/rules.ts';
import { PermanentJobError, type JobContext, type JobDefinition, type JobOutcome } from './types.ts';

/**
 * Normalises every posting version a stored webhook batch brought in (one job per batch, not per record),
 * then hands each sink's share to that sink's ledger queue, in the same transaction, which also completes
 * the job's own outbox row (issue 17).
 */
export const normaliseJob: JobDefinition<NormaliseJob> = {
  name: 'normalise',
  handles: (queue) => queue === NORMALISE_QUEUE,
  jobId: normaliseJobId,
  payloadSchema: 'https://schemas.amil.my/jobs/normalise-job.json',
  retry: { horizonMs: (pipeline) => pipeline.retryHorizonMs.normalise },
  async process(data: NormaliseJob, deps: Deps, context?: JobContext): Promise<JobOutcome> {
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
    await deps.store.ledger.saveNormalised(rows, jobs, deps.clock.now(), context?.completes);
    return { outboxCompleted: context?.completes !== undefined };
  },
};
