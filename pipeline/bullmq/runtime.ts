import type { JobsOptions } from 'bullmq';
import type { Deps } from '../../core/deps.ts';
import { outboxSignal } from '../../core/store/index.ts';
import { CALLBACK_QUEUE } from '../../core/queues.ts';
import { createLeasedQueue } from '../leased-queue.ts';
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
  /** Re-assert the nightly job scheduler at every reconciler pass (the worker process). */
  nightlyScheduler?: boolean;
}

/**
 * The BullMQ pipeline: the outbox relay, and (optionally) a worker per queue. The callbacks are the
 * exception (decision 218): every worker leases them straight from the outbox, a BullMQ job per callback
 * being most of a delivery's cost. Their BullMQ worker stays, for jobs an earlier version handed to Redis.
 */
export function createBullRuntime(
  deps: Deps,
  options: BullRuntimeOptions = { pollMs: 500, withWorkers: true },
): PipelineRuntime {
  const relay = createOutboxRelay(deps, { ...options, except: CALLBACK_QUEUE });
  const workers = options.withWorkers ? createBullWorkers(deps) : undefined;
  const reconciler = options.withWorkers
    ? createReconciler(deps, relay.queues, { nightlyScheduler: options.nightlyScheduler ?? false })
    : undefined;
  // A leased callback waits for at most one delivery before its own, each within the callback's own lease
  // (its timeout and 5 s: pipeline/jobs/callback.ts).
  const callbacks = createLeasedQueue(deps, {
    queue: CALLBACK_QUEUE,
    pollMs: options.pollMs,
    leaseMs: 2 * (deps.config.callbacks.timeoutMs + 5000),
  });
  const names = pipelineQueueNames(deps.config);
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

  // The callbacks' counts are the outbox's and Redis's (jobs handed over by an earlier version) together.
  async function counts(): Promise<QueueCounts[]> {
    const [inRedis, leased] = await Promise.all([readQueueCounts(relay.queues, names), callbacks.counts()]);
    return inRedis.map((c) =>
      c.queue !== leased.queue
        ? c
        : {
            queue: c.queue,
            waiting: c.waiting + leased.waiting,
            active: c.active + leased.active,
            delayed: c.delayed,
            failed: c.failed + leased.failed,
            completed: c.completed + leased.completed,
          },
    );
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
        // Redis's own counts: the outbox's callbacks include retries scheduled for later, which `pending`
        // and the leased queue's drain leave out, as a drain must.
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
      return [...inRedis, ...(await callbacks.failed())];
    },
    async retryFailed(queue) {
      let retried = 0;
      for (const name of names.filter((n) => queue === undefined || n === queue)) {
        for (const job of await relay.queues.get(name).getFailed()) {
          await job.retry('failed', { resetAttemptsMade: true });
          retried += 1;
        }
      }
      return retried + (await callbacks.retryFailed(queue));
    },
  };
}
