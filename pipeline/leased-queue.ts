import type { Deps } from '../core/deps.ts';
import type { OutboxRow } from '../core/store/index.ts';
import { jobFor } from './jobs/index.ts';
import { runOutboxRow } from './outbox-job.ts';
import type { FailedJob, QueueCounts } from './runtime.ts';
import { retryPolicyFor } from './retry.ts';
import { WAKE_GAP_MS } from './poller.ts';
import { createStoreFault } from './store-fault.ts';

export interface LeasedQueueOptions {
  queue: string;
  /** How often the outbox is looked at when nothing is due. */
  pollMs: number;
  /**
   * How long a leased row is held: longer than a row can wait here and then run (it holds at most twice its
   * job's concurrency, so a row waits for at most one job before its own). When a worker dies, its rows are
   * taken again this long after it leased them.
   */
  leaseMs: number;
}

/**
 * One queue that Redis-mode workers run straight from the outbox, without a BullMQ job per row (the
 * callbacks, decision 218). Each worker leases due rows (outbox.lease: workers on several machines never
 * take the same row), holds at most twice its job's concurrency, and leases more as soon as half of that
 * is free, so a slow job holds one of its lanes and never the rest. Rows run as in embedded mode
 * (outbox-job.ts): completed in the job's own write, or rescheduled on the retry policy. Redis plays no
 * part: a Redis that is down or emptied does not hold these rows back.
 */
export function createLeasedQueue(deps: Deps, options: LeasedQueueOptions) {
  const { queue, pollMs, leaseMs } = options;
  const log = deps.logger.child({ component: 'leased-queue', queue });
  const width = jobFor(queue)?.concurrency ?? 1;
  const policy = retryPolicyFor(deps.config, queue);
  const storeFault = createStoreFault(log, deps.config.pipeline, pollMs);
  const buffer: OutboxRow[] = [];
  let inFlight = 0;
  let stopping = true;
  let loop: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  let idleWaiters: (() => void)[] = [];
  let lastRedrive = 0;
  /** A wake or a finished job asked for a lease while the loop was leasing: it leases again after. */
  let poked = false;
  /** When the last lease began, and when the loop's wait ends (epoch ms). */
  let leasedAt = 0;
  let sleepEnds = 0;

  const held = () => buffer.length + inFlight;

  /** Ends the loop's wait now; asked for while the loop is leasing, it leases again right after. */
  function poke(): void {
    clearTimeout(timer);
    const resume = wake;
    wake = undefined;
    if (resume) resume();
    else poked = true;
  }

  /** Rows just committed (decision 220): leases now, or WAKE_GAP_MS after the last lease began. */
  function wakeSoon(): void {
    if (!wake) {
      poked = true;
      return;
    }
    const at = Math.max(Date.now(), leasedAt + WAKE_GAP_MS);
    if (at >= sleepEnds) return;
    clearTimeout(timer);
    sleepEnds = at;
    timer = setTimeout(poke, at - Date.now());
  }

  /** Starts leased rows while a lane is free. On stop too: they are this worker's until their lease ends. */
  function pump(): void {
    while (inFlight < width && buffer.length > 0) {
      const row = buffer.shift()!;
      inFlight += 1;
      void runOutboxRow(deps, row, policy, log)
        .then(
          () => storeFault.recovered(),
          // The store could not record the outcome: the row is taken again when its lease ends.
          (err: unknown) => void storeFault.failed(err),
        )
        .finally(() => {
          inFlight -= 1;
          pump();
          if (held() <= width) poke();
          if (held() === 0) {
            const waiters = idleWaiters;
            idleWaiters = [];
            for (const resolve of waiters) resolve();
          }
        });
    }
  }

  /** Leases rows once half of what it may hold is free; returns how many. */
  async function leaseMore(): Promise<number> {
    if (storeFault.waitMs() > 0 || held() > width) return 0;
    const now = deps.clock.now();
    // Failed rows whose re-drive time has come (past their retry horizon): looked for once a poll interval.
    if (now.getTime() - lastRedrive >= pollMs) {
      lastRedrive = now.getTime();
      await deps.store.outbox.redriveDue(now, queue);
    }
    const rows = await deps.store.outbox.lease(
      queue,
      2 * width - held(),
      now,
      new Date(now.getTime() + leaseMs),
    );
    buffer.push(...rows);
    pump();
    return rows.length;
  }

  async function run(): Promise<void> {
    while (!stopping) {
      let delay = pollMs;
      poked = false;
      leasedAt = Date.now();
      try {
        // Leased some and already room for more: look again at once (a backlog flows without pauses).
        if ((await leaseMore()) > 0 && held() <= width) delay = 0;
      } catch (err) {
        delay = storeFault.failed(err);
      }
      if (poked) delay = Math.min(delay, Math.max(0, leasedAt + WAKE_GAP_MS - Date.now()));
      delay = Math.max(delay, storeFault.waitMs());
      if (delay > 0 && !stopping)
        await new Promise<void>((resolve) => {
          wake = resolve;
          sleepEnds = Date.now() + delay;
          timer = setTimeout(resolve, delay);
        });
    }
  }

  const idle = () =>
    held() === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve));

  return {
    queue,
    start(): void {
      if (!stopping) return;
      stopping = false;
      loop = run();
    },
    /** Leases now rather than at the next poll: rows of the queue were just committed (decision 220). */
    wake: wakeSoon,
    /** Stops leasing; the rows already leased are run (at most twice the concurrency). */
    async stop(): Promise<void> {
      stopping = true;
      poke();
      await loop;
      await idle();
    },
    /** Runs until nothing of the queue is due (tests, the CLI). */
    async drain(): Promise<void> {
      for (;;) {
        await idle();
        if ((await leaseMore()) === 0) return idle();
      }
    },
    async counts(): Promise<QueueCounts> {
      const stats = (await deps.store.outbox.stats()).find((s) => s.queue === queue);
      return {
        queue,
        // Leased rows not yet run are waiting too: their job has not finished.
        waiting: Math.max(0, (stats?.waiting ?? 0) - inFlight),
        active: inFlight,
        delayed: 0,
        failed: stats?.failed ?? 0,
        completed: stats?.sent ?? 0,
      };
    },
    async failed(): Promise<FailedJob[]> {
      return (await deps.store.outbox.failed())
        .filter((f) => f.queue === queue)
        .map((f) => ({ queue, jobId: f.jobId, attempts: f.attempts, error: f.lastError ?? '' }));
    },
    /** Puts the queue's failed rows back in line (when `which` is this queue, or all); returns how many. */
    async retryFailed(which?: string): Promise<number> {
      return which === undefined || which === queue ? deps.store.outbox.retryFailed(queue) : 0;
    },
  };
}

export type LeasedQueue = ReturnType<typeof createLeasedQueue>;
