import { Queue, UnrecoverableError, Worker, type JobsOptions, type MinimalJob } from 'bullmq';
import { Redis } from 'ioredis';
import type { Deps } from '../core/deps.ts';
import { jobFor } from './jobs/index.ts';
import { PermanentJobError } from './jobs/types.ts';
import { pipelineQueueNames } from './queues.ts';
import { byQueue, createPoller } from './poller.ts';
import { createReconciler } from './reconciler.ts';
import { delayBefore, jobOptionsFor, retryPolicyFor } from './retry.ts';
import type { FailedJob, PipelineRuntime, QueueCounts } from './runtime.ts';

/**
 * How often a job may be handed back after its worker died before BullMQ fails it. Jobs converge when run
 * twice, so crashes only cost time; the bound stops a job that kills every worker from looping for ever,
 * and even then the reconciler re-drives it (docs/pipeline.md).
 */
const MAX_STALLS = 10;

const ROWS_PER_LOOK = 500;

function redisUrlOf(deps: Deps): string {
  const url = deps.config.redisUrl;
  if (!url) throw new Error('BullMQ needs REDIS_URL');
  return url;
}

/**
 * Queues for adding jobs. Their connection fails fast while Redis is down (no offline queue), so the relay
 * notices at once and leaves the rows in the outbox.
 */
/** BullMQ's job counts of each queue (prioritized jobs count as waiting). */
export function readQueueCounts(
  queues: { get(name: string): Queue },
  names: readonly string[],
): Promise<QueueCounts[]> {
  return Promise.all(
    names.map(async (queue) => {
      const c = await queues
        .get(queue)
        .getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized');
      return {
        queue,
        waiting: (c.waiting ?? 0) + (c.prioritized ?? 0),
        active: c.active ?? 0,
        delayed: c.delayed ?? 0,
        failed: c.failed ?? 0,
        completed: c.completed ?? 0,
      };
    }),
  );
}

export function openQueues(deps: Deps): { get(name: string): Queue; close(): Promise<void> } {
  const connection = new Redis(redisUrlOf(deps), { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  connection.on('error', () => undefined); // reported by the failing calls themselves
  const queues = new Map<string, Queue>();
  return {
    get(name) {
      let queue = queues.get(name);
      if (!queue) {
        queue = new Queue(name, { connection, prefix: deps.config.queuePrefix });
        queue.on('error', () => undefined);
        queues.set(name, queue);
      }
      return queue;
    },
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
      connection.disconnect();
    },
  };
}

/**
 * Moves outbox rows to BullMQ with their deterministic job ids, then marks them sent. With Redis down the
 * rows wait; when it returns they flow. A crash between add and mark re-adds a job id BullMQ already has,
 * which it ignores (and the job converges if it ran anyway): nothing lost, nothing doubled.
 */
export function createBullRelay(
  deps: Deps,
  options: { pollMs: number; jobOptions?: JobsOptions } = { pollMs: 500 },
) {
  const log = deps.logger.child({ component: 'bull-relay' });
  const queues = openQueues(deps);
  let redisDown = false;

  async function handOver(): Promise<number> {
    const rows = await deps.store.outbox.pending(ROWS_PER_LOOK, deps.clock.now());
    for (const [name, queueRows] of byQueue(rows)) {
      await queues.get(name).addBulk(
        queueRows.map((row) => ({
          name,
          data: JSON.parse(row.payload) as unknown,
          opts: { ...(options.jobOptions ?? jobOptionsFor(deps.config, name)), jobId: row.jobId },
        })),
      );
      await deps.store.outbox.markSentMany(
        queueRows.map((r) => r.id),
        deps.clock.now(),
      );
    }
    return rows.length;
  }

  const poller = createPoller(
    () =>
      handOver().then(
        (n) => {
          if (redisDown) log.info('redis is back: the outbox flows again');
          redisDown = false;
          return { more: n === ROWS_PER_LOOK };
        },
        (err: unknown) => {
          if (!redisDown) log.warn({ err }, 'cannot reach redis: postings wait in the outbox');
          redisDown = true;
          return { more: false };
        },
      ),
    options.pollMs,
  );

  return {
    start: () => poller.start(),
    async stop(): Promise<void> {
      await poller.stop();
      await queues.close();
    },
    /** One hand-over now (tests and the CLI). */
    handOver,
    queues,
  };
}

/**
 * A BullMQ worker per pipeline queue, each running the same processors as the in-process runner. Several
 * worker processes may run against one Redis. A PermanentJobError fails the job at once (UnrecoverableError).
 * Jobs are short synchronous SQLite work (a batch of at most 5,000 records), far inside the lock duration,
 * so lock renewal is never starved.
 */
export function createBullWorkers(
  deps: Deps,
  queueNames: readonly string[] = pipelineQueueNames(deps.config),
) {
  const log = deps.logger.child({ component: 'bull-worker' });
  const workers = queueNames.map((name) => {
    const definition = jobFor(name);
    if (!definition) throw new Error(`no job handles queue ${name}`);
    const worker = new Worker(
      name,
      async (job) => {
        try {
          await definition.process(job.data as never, deps);
        } catch (err) {
          if (!(err instanceof PermanentJobError)) throw err;
          // Never re-added by the reconciler: it fails the same way every time.
          if (job.id) await deps.store.outbox.markFailedForGood(job.id, err.message, deps.clock.now());
          throw new UnrecoverableError(err.message);
        }
        // The outbox row is done only now: a Redis lost before this leaves it to the reconciler.
        if (job.id) await deps.store.outbox.markDone(job.id, deps.clock.now());
      },
      {
        connection: new Redis(redisUrlOf(deps), { maxRetriesPerRequest: null }),
        prefix: deps.config.queuePrefix,
        concurrency: definition.concurrency ?? 1,
        lockDuration: deps.config.pipeline.workerLockMs,
        stalledInterval: Math.max(100, Math.round(deps.config.pipeline.workerLockMs / 2)),
        maxStalledCount: MAX_STALLS,
        autorun: false,
        settings: {
          backoffStrategy: (attemptsMade: number, _type?: string, _err?: Error, job?: MinimalJob) =>
            delayBefore(retryPolicyFor(deps.config, job?.queueName ?? name), attemptsMade),
        },
      },
    );
    worker.on('failed', (job, err) =>
      log.warn({ err, queue: name, job_id: job?.id, attempts: job?.attemptsMade }, 'job failed'),
    );
    worker.on('error', (err) => log.warn({ err, queue: name }, 'worker error'));
    return worker;
  });
  return {
    start(): void {
      for (const worker of workers) {
        worker.run().catch((err: unknown) => log.error({ err, queue: worker.name }, 'worker stopped'));
      }
    },
    /** Finishes the jobs in flight (or hands them back when the grace runs out), then disconnects. */
    async stop(): Promise<void> {
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all(workers.map(async (w) => (await w.client).disconnect()));
    },
  };
}

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
  const relay = createBullRelay(deps, options);
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
