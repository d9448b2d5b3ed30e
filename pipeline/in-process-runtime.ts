import type { Deps } from '../core/deps.ts';
import type { OutboxRow } from '../core/store/index.ts';
import { jobFor } from './jobs/index.ts';
import { runOutboxRow } from './outbox-job.ts';
import type { PipelineRuntime } from './runtime.ts';
import { byQueue, createPoller } from './poller.ts';
import { retryPolicyFor, type RetryPolicy } from './retry.ts';
import { outboxSignal } from '../core/store/index.ts';
import { createStoreFault } from './store-fault.ts';
import { createOutboxPruner } from './outbox-pruner.ts';
import { createCallbackQueue } from './callbacks/queue.ts';
import { CALLBACK_QUEUE } from '../core/queues.ts';

export interface InProcessOptions {
  /** How often the outbox is looked at when idle. */
  pollMs: number;
  /** Overrides the retry policy's attempts (tests, replays). */
  maxAttempts?: number;
  /** Overrides the retry policy's first delay (tests, replays). */
  backoffMs?: number;
}

export const DEFAULT_IN_PROCESS_OPTIONS: InProcessOptions = { pollMs: 500 };

const ROWS_PER_LOOK = 500;
/** How often a look also forgets the outbox rows done longer ago than OUTBOX_KEEP_DAYS (decision 241). */
const PRUNE_EVERY_MS = 60_000;

/**
 * The in-process runtime (embedded mode, no Redis): takes outbox rows and runs their jobs in this process,
 * marking a row sent only once its job has finished, so a crash at any point leaves the row to run again
 * (and every job converges when run twice). Each queue runs on its own, one job at a time (or its
 * job's `concurrency` at once), so a slow or failing queue (one agency's ledger) never holds back another.
 * A job past its retry horizon shows as failed and is re-driven every maximum retry interval; a store that
 * cannot write makes it back off (store-fault.ts). The callbacks run from their own rows (decision 264),
 * leased as the workers of Redis mode lease them (callbacks/queue.ts).
 */
export function createInProcessRuntime(
  deps: Deps,
  options: InProcessOptions = DEFAULT_IN_PROCESS_OPTIONS,
): PipelineRuntime {
  const log = deps.logger.child({ component: 'relay' });
  const busyQueues = new Map<string, Promise<void>>();
  let stopping = false;
  let unlisten = (): unknown => undefined;
  const storeFault = createStoreFault(log, deps.config.pipeline, options.pollMs);
  const pruner = createOutboxPruner(deps.store.outbox, deps.config.pipeline.outboxKeepMs);
  let prunedAt = -Infinity;
  const callbacks = createCallbackQueue(deps, { pollMs: options.pollMs });

  // Worked out once per queue: the sum over the horizon is 2% of a callback's delivery (decision 236).
  const policies = new Map<string, RetryPolicy>();
  function policyOf(queue: string): RetryPolicy {
    let policy = policies.get(queue);
    if (!policy) {
      const base = retryPolicyFor(deps.config, queue);
      policy = {
        ...base,
        attempts: options.maxAttempts ?? base.attempts,
        baseMs: options.backoffMs ?? base.baseMs,
      };
      policies.set(queue, policy);
    }
    return policy;
  }

  /** Runs a row's job and records the outcome; rejects only when the store cannot record it. */
  async function runOne(row: OutboxRow): Promise<void> {
    await runOutboxRow(deps, row, policyOf(row.queue), log);
    storeFault.recovered();
  }

  /** Starts a chain for every queue with pending rows that is not already running; returns rows seen. */
  async function look(): Promise<number> {
    // Backing off from a store that cannot write: no attempt until the pause is over.
    if (storeFault.waitMs() > 0) return 0;
    await deps.store.outbox.redriveDue(deps.clock.now());
    if (Date.now() - prunedAt >= PRUNE_EVERY_MS) {
      prunedAt = Date.now();
      await pruner.pass(deps.clock.now());
    }
    // The callbacks run from their own rows: an outbox row of theirs is an earlier release's, to be retired.
    const rows = await deps.store.outbox.pending(ROWS_PER_LOOK, deps.clock.now(), CALLBACK_QUEUE);
    for (const [queue, queueRows] of byQueue(rows)) {
      if (busyQueues.has(queue)) continue;
      const width = jobFor(queue)?.concurrency ?? 1;
      let next = 0;
      // `width` lanes, each taking the next row as soon as its job is done: one slow merchant holds one
      // lane, not a whole batch (and the deliveries' finishes spread out, which the store groups).
      const lane = async (): Promise<void> => {
        // On shutdown the jobs in flight finish; the rest stay in the outbox for the next start.
        while (next < queueRows.length && !stopping) {
          await runOne(queueRows[next++]!);
          // SQLite calls are synchronous: yield so the web requests of this process are served meanwhile.
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      const chain = Promise.all(Array.from({ length: Math.min(width, queueRows.length) }, lane))
        .then(() => undefined)
        .catch((err: unknown) => {
          storeFault.failed(err);
        })
        .finally(() => {
          busyQueues.delete(queue);
          poller.poke(storeFault.waitMs());
        });
      busyQueues.set(queue, chain);
    }
    return rows.length;
  }

  const poller = createPoller(
    () =>
      look().then(
        () => ({ more: false, delayMs: storeFault.waitMs() || options.pollMs }),
        (err: unknown) => ({ more: false, delayMs: storeFault.failed(err) }),
      ),
    options.pollMs,
  );

  return {
    kind: 'in-process',
    start(): void {
      stopping = false;
      poller.start();
      callbacks.start();
      // Rows this process just committed start at once, not at the next poll (decision 220).
      unlisten();
      unlisten = outboxSignal.listen((queues) => {
        if (queues.has(CALLBACK_QUEUE)) callbacks.wake();
        if ([...queues].some((queue) => queue !== CALLBACK_QUEUE)) poller.wake();
      });
    },
    /** Stops looking and waits for the jobs in flight to finish. */
    async stop(): Promise<void> {
      stopping = true;
      unlisten();
      await Promise.all([poller.stop().then(() => Promise.all(busyQueues.values())), callbacks.stop()]);
    },
    /** Runs until the outbox has nothing ready (for tests, replays and the CLI). */
    async drain(): Promise<void> {
      stopping = false;
      for (;;) {
        const seen = await look();
        await Promise.all(busyQueues.values());
        // Callbacks are queued by settlements, never by these jobs: one drain of them per look is enough.
        await callbacks.drain();
        // stop() during a drain: look() starts nothing any more, so looping would spin forever.
        if (seen === 0 || stopping) return;
      }
    },
    async counts() {
      const [stats, ofCallbacks] = await Promise.all([deps.store.outbox.stats(), callbacks.counts()]);
      const fromOutbox = stats
        // Outbox rows of callbacks are an earlier release's, retired: the callbacks' counts are their own.
        .filter((s) => s.queue !== CALLBACK_QUEUE)
        .map((s) => ({
          queue: s.queue,
          waiting: s.waiting,
          active: busyQueues.has(s.queue) ? 1 : 0,
          delayed: 0,
          failed: s.failed,
          completed: s.sent,
        }));
      return [...fromOutbox, ofCallbacks].sort((a, b) => a.queue.localeCompare(b.queue));
    },
    async failed() {
      return (await deps.store.outbox.failed()).map((f) => ({
        queue: f.queue,
        jobId: f.jobId,
        attempts: f.attempts,
        error: f.lastError ?? '',
      }));
    },
    retryFailed: (queue) => deps.store.outbox.retryFailed(queue),
  };
}
