import type { JobsOptions } from 'bullmq';
import type { Deps } from '../../core/deps.ts';
import { outboxSignal } from '../../core/store/index.ts';
import { CALLBACK_QUEUE } from '../../core/queues.ts';
import { createCallbackQueue } from '../callbacks/queue.ts';
import { pipelineQueueNames } from '../queues.ts';
import type { FailedJob, PipelineRuntime, QueueCounts } from '../runtime.ts';
import { createOutboxRelay } from './outbox-relay.ts';
import { readQueueCounts, REDIS_STOP_WAIT_MS } from './queues.ts';
import { createReconciler } from './reconciler.ts';
import { subscribeWakes } from './wakes.ts';
import { createBullWorkers } from './workers.ts';

export interface BullRuntimeOptions {
  pollMs: number;
  /** Overrides the retry policy's options of every queue (tests). */
  jobOptions?: JobsOptions;
  /** Run workers (and the reconciler) in this process too (the worker process and tests do; `amil queues` does not). */
  withWorkers: boolean;
  /**
   * This process schedules the nightly run (the worker process, which runs createNightlyScheduler): its
   * reconciler removes the BullMQ job scheduler earlier releases kept in Redis (decision 274).
   */
  nightlyScheduler?: boolean;
}

/**
 * The BullMQ pipeline: the outbox relay, and (optionally) a worker per queue. The callbacks are the
 * exception (decisions 218, 264): every worker leases them straight from their own rows, a BullMQ job per
 * callback being most of a delivery's cost; they have no BullMQ queue or worker.
 */
export function createBullRuntime(
  deps: Deps,
  options: BullRuntimeOptions = { pollMs: 500, withWorkers: true },
): PipelineRuntime {
  // Every queue but the callbacks (an outbox row of theirs an earlier release wrote is never handed over).
  const names = pipelineQueueNames(deps.config).filter((name) => name !== CALLBACK_QUEUE);
  const relay = createOutboxRelay(deps, { ...options, except: CALLBACK_QUEUE });
  const workers = options.withWorkers ? createBullWorkers(deps, names) : undefined;
  const reconciler = options.withWorkers
    ? createReconciler(deps, relay.queues, { nightlyScheduler: options.nightlyScheduler ?? false })
    : undefined;
  const callbacks = createCallbackQueue(deps, { pollMs: options.pollMs });
  let wakes: { close(): void } | undefined;
  let unlisten = (): unknown => undefined;
  /** Rows a web process just committed: the callbacks' lease, or the relay's hand-over, now. */
  const wake = (queues: ReadonlySet<string>) => {
    if (queues.has(CALLBACK_QUEUE)) callbacks.wake();
    if ([...queues].some((queue) => queue !== CALLBACK_QUEUE)) relay.wake();
  };
  /**
   * Rows this worker just committed: only a callback is leased at once (a payment the enquiry settled). Its
   * jobs' follow-on rows (a batch's ledger jobs) wait for a relay's poll, or a busy relay's next look, as
   * before: under a backlog they come with every job, and a wake each would only add hand-overs beside the
   * relay that is already looking without pause.
   */
  const wakeOwn = (queues: ReadonlySet<string>) => {
    if (queues.has(CALLBACK_QUEUE)) callbacks.wake();
  };

  /** Redis's counts of its queues, and the callbacks' own, in the order of the pipeline's queues. */
  async function counts(): Promise<QueueCounts[]> {
    const [inRedis, leased] = await Promise.all([readQueueCounts(relay.queues, names), callbacks.counts()]);
    const order = pipelineQueueNames(deps.config);
    return [...inRedis, leased].sort((a, b) => order.indexOf(a.queue) - order.indexOf(b.queue));
  }

  return {
    kind: 'bullmq',
    start() {
      relay.start();
      workers?.start();
      reconciler?.start();
      if (options.withWorkers) {
        callbacks.start();
        wakes = subscribeWakes(deps, wake);
        unlisten();
        unlisten = outboxSignal.listen(wakeOwn);
      }
    },
    async stop() {
      unlisten();
      wakes?.close();
      wakes = undefined;
      await callbacks.stop();
      // One wait on a Redis that does not answer for the whole stop, not one per part (REDIS_STOP_WAIT_MS).
      const until = Date.now() + REDIS_STOP_WAIT_MS;
      await Promise.all([
        workers?.stop(),
        // The reconciler adds jobs through the relay's queues: it stops first.
        reconciler ? reconciler.stop(until).then(() => relay.stop(until)) : relay.stop(until),
      ]);
    },
    async drain() {
      for (;;) {
        const handed = await relay.handOver();
        // Without workers here (the CLI), other processes' workers lease the callbacks.
        if (options.withWorkers) await callbacks.drain();
        const inRedis = await readQueueCounts(relay.queues, names);
        const busy = inRedis.some((c) => c.waiting + c.active + c.delayed > 0);
        const waiting = (await deps.store.outbox.pending(1, deps.clock.now())).length;
        if (handed === 0 && !busy && waiting === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    counts,
    async failed(): Promise<FailedJob[]> {
      const lists = await Promise.all(names.map((name) => relay.queues.get(name).getFailed()));
      const inRedis = lists.flat().map((job) => ({
        queue: job.queueName,
        jobId: job.id ?? '',
        attempts: job.attemptsMade,
        error: job.failedReason,
      }));
      // A callback never fails as a job: given up, it is dead (`amil callbacks list --failed`).
      return inRedis;
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
