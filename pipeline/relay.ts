import type { Deps } from '../core/deps.ts';
import type { OutboxRow } from '../core/store/index.ts';
import { jobFor } from './jobs/index.ts';
import { PermanentJobError } from './jobs/types.ts';
import type { PipelineRuntime } from './runtime.ts';
import { byQueue, createPoller } from './poller.ts';

export interface RelayOptions {
  /** How often the outbox is looked at when idle. */
  pollMs: number;
  /** Attempts before a job is failed for good (ops retry it with `amil queues retry`). */
  maxAttempts: number;
  /** First retry delay; doubled per attempt, with full jitter. */
  backoffMs: number;
}

export const DEFAULT_RELAY_OPTIONS: RelayOptions = { pollMs: 500, maxAttempts: 8, backoffMs: 1000 };

const ROWS_PER_LOOK = 500;

/**
 * The in-process runner (embedded mode, no Redis): takes outbox rows and runs their job processors in this
 * process, marking a row sent only once its job has finished, so a crash at any point leaves the row to
 * run again (and every job converges when run twice). Each queue runs on its own, one job at a time (or its
 * job's `concurrency` at once), so a slow or failing queue (one agency's ledger) never holds back another.
 */
export function createInProcessRelay(
  deps: Deps,
  options: RelayOptions = DEFAULT_RELAY_OPTIONS,
): PipelineRuntime {
  const log = deps.logger.child({ component: 'relay' });
  const busyQueues = new Map<string, Promise<void>>();
  let stopping = false;

  async function runOne(row: OutboxRow): Promise<void> {
    const now = () => deps.clock.now();
    const job = jobFor(row.queue);
    try {
      if (!job) throw new PermanentJobError(`no job handles queue ${row.queue}`);
      await job.process(JSON.parse(row.payload) as never, deps);
      await deps.store.outbox.markSent(row.id, now());
    } catch (err) {
      const attempts = row.attempts + 1;
      const permanent = err instanceof PermanentJobError || attempts >= options.maxAttempts;
      const retryAt = permanent
        ? undefined
        : new Date(now().getTime() + Math.random() * options.backoffMs * 2 ** (attempts - 1));
      log.warn({ err, queue: row.queue, job_id: row.jobId, attempts, permanent }, 'job failed');
      await deps.store.outbox.markAttemptFailed(
        row.id,
        String((err as Error).message ?? err),
        now(),
        retryAt,
      );
    }
  }

  /** Starts a chain for every queue with pending rows that is not already running; returns rows seen. */
  async function look(): Promise<number> {
    const rows = await deps.store.outbox.pending(ROWS_PER_LOOK, deps.clock.now());
    for (const [queue, queueRows] of byQueue(rows)) {
      if (busyQueues.has(queue)) continue;
      const width = jobFor(queue)?.concurrency ?? 1;
      const chain = (async () => {
        for (let i = 0; i < queueRows.length; i += width) {
          // On shutdown the jobs in flight finish; the rest stay in the outbox for the next start.
          if (stopping) break;
          await Promise.all(queueRows.slice(i, i + width).map(runOne));
          // SQLite calls are synchronous: yield so the web requests of this process are served meanwhile.
          await new Promise((resolve) => setImmediate(resolve));
        }
      })()
        .catch((err: unknown) => log.error({ err, queue }, 'relay chain failed'))
        .finally(() => {
          busyQueues.delete(queue);
          poller.poke();
        });
      busyQueues.set(queue, chain);
    }
    return rows.length;
  }

  const poller = createPoller(
    () =>
      look().then(
        () => ({ more: false }),
        (err: unknown) => {
          log.error({ err }, 'relay look failed');
          return { more: false };
        },
      ),
    options.pollMs,
  );

  return {
    kind: 'in-process',
    start(): void {
      stopping = false;
      poller.start();
    },
    /** Stops looking and waits for the jobs in flight to finish. */
    async stop(): Promise<void> {
      stopping = true;
      await poller.stop();
      await Promise.all(busyQueues.values());
    },
    /** Runs until the outbox has nothing ready (for tests, replays and the CLI). */
    async drain(): Promise<void> {
      stopping = false;
      for (;;) {
        const seen = await look();
        await Promise.all(busyQueues.values());
        // stop() during a drain: look() starts nothing any more, so looping would spin forever.
        if (seen === 0 || stopping) return;
      }
    },
    async counts() {
      return (await deps.store.outbox.stats()).map((s) => ({
        queue: s.queue,
        waiting: s.waiting,
        active: busyQueues.has(s.queue) ? 1 : 0,
        delayed: 0,
        failed: s.failed,
        completed: s.sent,
      }));
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
