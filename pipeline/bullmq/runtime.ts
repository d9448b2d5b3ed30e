import type { JobsOptions } from 'bullmq';
import type { Deps } from '../../core/deps.ts';
import { pipelineQueueNames } from '../queues.ts';
import type { FailedJob, PipelineRuntime } from '../runtime.ts';
import { createOutboxRelay } from './outbox-relay.ts';
import { readQueueCounts } from './queues.ts';
import { createReconciler } from './reconciler.ts';
import { createBullWorkers } from './workers.ts';

export interface BullRuntimeOptions {
  pollMs: number;
  /** Overrides the retry policy's options of every queue (tests). */
  jobOptions?: JobsOptions;
  /** Run workers (and the reconciler) in this process too (the worker process and tests do; `amil queues` does not). */
  withWorkers: boolean;
  /** Re-assert the nightly job scheduler at every reconciler pass (the worker process). */
  nightlyScheduler?: boolean;
}

/** The BullMQ pipeline: the outbox relay, and (optionally) a worker per queue. */
export function createBullRuntime(
  deps: Deps,
  options: BullRuntimeOptions = { pollMs: 500, withWorkers: true },
): PipelineRuntime {
  const relay = createOutboxRelay(deps, options);
  const workers = options.withWorkers ? createBullWorkers(deps) : undefined;
  const reconciler = options.withWorkers
    ? createReconciler(deps, relay.queues, { nightlyScheduler: options.nightlyScheduler ?? false })
    : undefined;
  const names = pipelineQueueNames(deps.config);

  const counts = () => readQueueCounts(relay.queues, names);

  return {
    kind: 'bullmq',
    start() {
      relay.start();
      workers?.start();
      reconciler?.start();
    },
    async stop() {
      await reconciler?.stop();
      await workers?.stop();
      await relay.stop();
    },
    async drain() {
      for (;;) {
        const handed = await relay.handOver();
        const busy = (await counts()).some((c) => c.waiting + c.active + c.delayed > 0);
        const waiting = (await deps.store.outbox.pending(1, deps.clock.now())).length;
        if (handed === 0 && !busy && waiting === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    counts,
    async failed(): Promise<FailedJob[]> {
      const lists = await Promise.all(names.map((name) => relay.queues.get(name).getFailed()));
      return lists.flat().map((job) => ({
        queue: job.queueName,
        jobId: job.id ?? '',
        attempts: job.attemptsMade,
        error: job.failedReason,
      }));
    },
    async retryFailed(queue) {
      let retried = 0;
      for (const name of names.filter((n) => queue === undefined || n === queue)) {
        for (const job of await relay.queues.get(name).getFailed()) {
          await job.retry('failed', { resetAttemptsMade: true });
          retried += 1;
        }
      }
      return retried;
    },
  };
}
