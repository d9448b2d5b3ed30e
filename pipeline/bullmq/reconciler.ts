import type { Queue } from 'bullmq';
import type { Deps } from '../../core/deps.ts';
import { RECON_NIGHTLY_QUEUE } from '../../core/queues.ts';
import { createPoller } from '../poller.ts';
import { REDIS_STOP_WAIT_MS } from './queues.ts';
import { removeLegacyNightlyScheduler } from '../recon/scheduler.ts';
import { jobOptionsFor, redriveAt, retryPolicyFor } from '../retry.ts';
import { createOutboxPruner } from '../outbox-pruner.ts';

const ROWS_PER_LOOK = 500;

/**
 * Keeps Redis in step with the outbox (Redis mode), in every worker: a row handed to Redis and not done
 * after the grace period is looked for there. A job Redis no longer holds (a Redis lost, flushed or failed
 * over) is re-added under the same job id, so a second add of a job it still has is ignored; a job that
 * completed but whose row was not marked is marked; a job failed past its retry horizon is re-driven every
 * maximum retry interval (the nightly run's too: it is owed in the outbox, decision 274). The worker
 * process's reconciler also removes, at each pass, the nightly job scheduler earlier releases kept in Redis
 * (their workers, still running during a rolling upgrade, re-create it at each of their passes). Each
 * pass forgets the outbox rows of jobs done longer ago than OUTBOX_KEEP_DAYS (decision 241). A lost Redis
 * costs time, not data.
 */
export function createReconciler(
  deps: Deps,
  queues: { get(name: string): Queue },
  options: { nightlyScheduler: boolean },
) {
  const log = deps.logger.child({ component: 'reconciler' });
  const { reconcileMs, reconcileGraceMs } = deps.config.pipeline;
  let failing = false;
  const pruner = createOutboxPruner(deps.store.outbox, deps.config.pipeline.outboxKeepMs);

  async function pass(): Promise<{ more: boolean }> {
    // At every pass, not once: during a rolling upgrade the workers of the release before re-create it.
    if (options.nightlyScheduler) await removeLegacyNightlyScheduler(queues.get(RECON_NIGHTLY_QUEUE));
    const now = deps.clock.now();
    const rows = await deps.store.outbox.unfinished(
      new Date(now.getTime() - reconcileGraceMs),
      ROWS_PER_LOOK,
    );
    const seen: number[] = [];
    let readded = 0;
    let redriven = 0;
    for (const row of rows) {
      const queue = queues.get(row.queue);
      const state = await queue.getJobState(row.jobId);
      if (state === 'unknown') {
        await queue.add(row.queue, JSON.parse(row.payload) as unknown, {
          ...jobOptionsFor(deps.config, row.queue),
          jobId: row.jobId,
        });
        readded += 1;
      } else if (state === 'completed') {
        await deps.store.outbox.markDone(row.jobId, now);
        continue;
      } else if (state === 'failed') {
        const job = await queue.getJob(row.jobId);
        const policy = retryPolicyFor(deps.config, row.queue);
        if (job && redriveAt(policy, new Date(job.finishedOn ?? 0)) <= now) {
          await job.retry('failed');
          redriven += 1;
        }
      }
      seen.push(row.id);
    }
    // Looked at now: looked at again one grace period later, not at every pass.
    if (seen.length > 0) await deps.store.outbox.markSentMany(seen, deps.clock.now());
    if (readded > 0) log.warn({ readded }, 're-added jobs that Redis no longer held');
    if (redriven > 0) log.warn({ redriven }, 're-drove jobs failed past their retry horizon');
    // The outbox rows of jobs done longer ago than OUTBOX_KEEP_DAYS go (decision 241).
    await pruner.pass(now);
    return { more: rows.length === ROWS_PER_LOOK };
  }

  const poller = createPoller(
    () =>
      pass().then(
        (result) => {
          if (failing) log.info('the reconciler reaches redis and the store again');
          failing = false;
          return result;
        },
        (err: unknown) => {
          if (!failing) log.warn({ err }, 'reconciler pass failed; trying again at the next interval');
          failing = true;
          return { more: false };
        },
      ),
    reconcileMs,
  );
  return {
    start: () => poller.start(),
    /** Stops, waiting for a pass in progress until `until` (epoch ms) at most. */
    stop: (until = Date.now() + REDIS_STOP_WAIT_MS) => poller.stop(until),
    pass,
  };
}
