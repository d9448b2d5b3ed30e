import type { Deps } from '../core/deps.ts';
import type { Logger } from '../core/logger.ts';
import type { OutboxRow } from '../core/store/index.ts';
import { jobFor } from './jobs/index.ts';
import { runJob } from './jobs/run.ts';
import { BusyJobError, PermanentJobError } from './jobs/types.ts';
import { afterFailure, type RetryPolicy } from './retry.ts';

/**
 * Runs an outbox row's job in this process and records the outcome: the row completed (in the job's own
 * last write, or marked sent here), or the failure with the row's next try under `policy`. Used wherever
 * jobs run straight from the outbox: the in-process runtime (the callbacks run from their own rows:
 * callbacks/queue.ts).
 * Rejects only when the store cannot record the outcome.
 */
export async function runOutboxRow(
  deps: Deps,
  row: OutboxRow,
  policy: RetryPolicy,
  log: Logger,
): Promise<void> {
  const now = () => deps.clock.now();
  const job = jobFor(row.queue);
  try {
    if (!job) throw new PermanentJobError(`no job handles queue ${row.queue}`);
    const outcome = await runJob(job, JSON.parse(row.payload) as unknown, deps, {
      completes: { sent: row.id },
    });
    // A job that completed its row in its own write (a ledger append, a normalise) needs no second write.
    if (!outcome?.outboxCompleted) await deps.store.outbox.markSent(row.id, now());
  } catch (err) {
    const attempts = row.attempts + 1;
    const { retryAt, failed } = afterFailure(policy, attempts, err, now());
    await deps.store.outbox.markAttemptFailed(
      row.id,
      String((err as Error).message ?? err),
      now(),
      retryAt,
      failed,
    );
    // Logged once recorded: with a store that cannot write, the store fault is the one line.
    const permanent = err instanceof PermanentJobError;
    const exhausted = failed && !permanent;
    if (err instanceof BusyJobError && !exhausted)
      log.info(
        { queue: row.queue, job_id: row.jobId, attempts, reason: err.message },
        'job waits for another attempt',
      );
    else log.warn({ err, queue: row.queue, job_id: row.jobId, attempts, permanent, exhausted }, 'job failed');
  }
}
