import { UnrecoverableError, Worker, type MinimalJob } from 'bullmq';
import { Redis } from 'ioredis';
import type { Deps } from '../../core/deps.ts';
import type { Logger } from '../../core/logger.ts';
import { isStoreOutage } from '../../core/store/outage.ts';
import { jobFor } from '../jobs/index.ts';
import { runJob } from '../jobs/run.ts';
import { BusyJobError, PermanentJobError } from '../jobs/types.ts';
import { settlesBy } from '../poller.ts';
import { pipelineQueueNames } from '../queues.ts';
import { delayBefore, retryPolicyFor } from '../retry.ts';
import { REDIS_STOP_WAIT_MS } from './queues.ts';
import { redisUrlOf } from './redis-url.ts';

/**
 * How often a job may be handed back after its worker died before BullMQ fails it. Jobs converge when run
 * twice, so crashes only cost time; the bound stops a job that kills every worker from looping for ever,
 * and even then the reconciler re-drives it (docs/pipeline.md).
 */
const MAX_STALLS = 10;

/** How often jobs failing on a store outage are summed up in the log while it lasts. */
const OUTAGE_LOG_EVERY_MS = 30_000;

/**
 * Logs jobs that failed because the store could not be reached: the first at once, then one line per
 * OUTAGE_LOG_EVERY_MS at most, with how many failed since the last. During an outage every job fails at
 * every retry (48 warnings, each with its stack, in 6 s of the crash test), and one line a period says the
 * same; `amil queues` still shows each job. Other failures are logged each.
 */
function outageFailureLog(log: Logger) {
  let loggedAt: number | undefined;
  let unlogged = 0;
  return (queue: string, jobId: string | undefined, err: unknown): void => {
    unlogged += 1;
    const now = Date.now();
    if (loggedAt !== undefined && now - loggedAt < OUTAGE_LOG_EVERY_MS) return;
    log.warn(
      { err, queue, job_id: jobId, failed: unlogged },
      'jobs fail: the store cannot be reached; they are retried',
    );
    loggedAt = now;
    unlogged = 0;
  };
}

/** How often, and how long, a stop asks whether Redis answers. */
const STOP_CHECK_MS = 250;

/**
 * Whether every connection answers a PING within `ms`. A connection's status is not enough: a Redis frozen
 * on its disk keeps the socket open ('ready') and answers nothing.
 */
async function allAnswer(connections: readonly Redis[], ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  const answers = await Promise.all(
    connections.map(async (connection) => {
      let answered = false;
      await settlesBy(
        connection.ping().then(() => (answered = true)),
        until,
      );
      return answered;
    }),
  );
  return answers.every(Boolean);
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
  const outageFailure = outageFailureLog(log);
  const connections: Redis[] = [];
  const workers = queueNames.map((name) => {
    const connection = new Redis(redisUrlOf(deps), { maxRetriesPerRequest: null });
    connections.push(connection);
    const definition = jobFor(name);
    if (!definition) throw new Error(`no job handles queue ${name}`);
    const worker = new Worker(
      name,
      async (job) => {
        let completed = false;
        try {
          const context = job.id ? { completes: { done: job.id } } : {};
          completed = (await runJob(definition, job.data, deps, context))?.outboxCompleted ?? false;
        } catch (err) {
          if (!(err instanceof PermanentJobError)) throw err;
          // Never re-added by the reconciler: it fails the same way every time.
          if (job.id) await deps.store.outbox.markFailedForGood(job.id, err.message, deps.clock.now());
          throw new UnrecoverableError(err.message);
        }
        // The outbox row is done only now: a Redis lost before this leaves it to the reconciler.
        if (job.id && !completed) await deps.store.outbox.markDone(job.id, deps.clock.now());
      },
      {
        connection,
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
    worker.on('failed', (job, err) => {
      if (isStoreOutage(err)) outageFailure(name, job?.id, err);
      // Still to be retried: a job out of attempts failed, whatever held it.
      else if (err instanceof BusyJobError && job && job.attemptsMade < (job.opts.attempts ?? 1))
        log.info(
          { queue: name, job_id: job?.id, attempts: job?.attemptsMade, reason: err.message },
          'job waits for another attempt',
        );
      else log.warn({ err, queue: name, job_id: job?.id, attempts: job?.attemptsMade }, 'job failed');
    });
    worker.on('error', (err) => log.warn({ err, queue: name }, 'worker error'));
    return worker;
  });
  return {
    start(): void {
      for (const worker of workers) {
        worker.run().catch((err: unknown) => log.error({ err, queue: worker.name }, 'worker stopped'));
      }
    },
    /**
     * Finishes the jobs in flight, then disconnects. While Redis does not answer (REDIS_STOP_WAIT_MS in a row),
     * it lets go instead: the connections are dropped and the jobs in flight left to their locks' expiry.
     */
    async stop(): Promise<void> {
      // A worker closed while its connections are still starting (a stop right after start) has BullMQ
      // re-throw the start-up's "Connection is closed" as an unhandled rejection: let them finish starting
      // first, for as long as Redis answers within a check. One check was not enough on a loaded machine:
      // the start-up took longer than 250 ms, and the rejection came (1 stop in 8 with the cores busy).
      const ready = Promise.all(workers.map((w) => w.waitUntilReady()));
      let silentSince: number | undefined;
      while (!(await settlesBy(ready, Date.now() + STOP_CHECK_MS))) {
        const answering = await allAnswer(connections, STOP_CHECK_MS);
        silentSince = answering ? undefined : (silentSince ?? Date.now());
        if (silentSince !== undefined && Date.now() - silentSince >= REDIS_STOP_WAIT_MS) break;
      }
      let closed = false;
      const closing = Promise.all(workers.map((w) => w.close())).then(() => (closed = true));
      silentSince = undefined;
      while (!closed) {
        await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, STOP_CHECK_MS))]);
        if (closed) break;
        const answering = await allAnswer(connections, STOP_CHECK_MS);
        if (closed) break;
        silentSince = answering ? undefined : (silentSince ?? Date.now());
        if (silentSince !== undefined && Date.now() - silentSince >= REDIS_STOP_WAIT_MS) {
          log.warn(
            { redis_silent_ms: Date.now() - silentSince },
            'stopping without Redis: jobs in flight are handed back when their locks expire',
          );
          void closing.catch(() => undefined);
          break;
        }
      }
      // Each worker's own connection, which BullMQ leaves open (asking the worker for it waits for a Redis that
      // never answered, for ever).
      for (const connection of connections) connection.disconnect();
    },
  };
}
