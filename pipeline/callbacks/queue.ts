import type { Deps } from '../../core/deps.ts';
import type { CallbackLease } from '../../core/store/index.ts';
import { CALLBACK_QUEUE } from '../../core/queues.ts';
import type { QueueCounts } from '../runtime.ts';
import { WAKE_GAP_MS } from '../poller.ts';
import { createStoreFault } from '../store-fault.ts';
import { CALLBACK_CONCURRENCY, LEASE_MARGIN_MS, deliverCallback } from './deliver.ts';

export interface CallbackQueueOptions {
  /** How often the callbacks are looked at when nothing is due. */
  pollMs: number;
  /**
   * How long a leased callback is held (default: twice the callback timeout and 5 s). This holds at most
   * twice its concurrency, so a callback waits for about one delivery before its own; one that waited so long
   * that its lease could end during its attempt is not sent (deliver.ts), and is leased again once its lease
   * has ended. When a process dies, its callbacks are leased again this long after it leased them; a delivery
   * whose attempt could not be recorded (the store failed) is tried again then.
   */
  leaseMs?: number;
}

/** How often the outbox rows of callbacks an earlier release wrote are retired (decision 264). */
const RETIRE_EVERY_MS = 60_000;

/**
 * The callbacks, run straight from their own rows (decision 264), by every process that delivers them: the
 * in-process runtime (embedded mode) and each worker (Redis mode, decision 218). Each leases due callbacks
 * (callbacks.leaseDue: processes on several machines never lease the same one), holds at most twice its
 * concurrency, and leases more as soon as half of that is free, so a slow merchant holds one lane and never
 * the rest. Redis plays no part: a Redis that is down or emptied does not hold callbacks back.
 */
export function createCallbackQueue(deps: Deps, options: CallbackQueueOptions) {
  const { pollMs } = options;
  const leaseMs = options.leaseMs ?? 2 * (deps.config.callbacks.timeoutMs + LEASE_MARGIN_MS);
  const queue = CALLBACK_QUEUE;
  const log = deps.logger.child({ component: 'callback-queue' });
  const width = CALLBACK_CONCURRENCY;
  const storeFault = createStoreFault(log, deps.config.pipeline, pollMs);
  const buffer: CallbackLease[] = [];
  let inFlight = 0;
  let stopping = true;
  let loop: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  let idleWaiters: (() => void)[] = [];
  let retiredAt = -Infinity;
  /** A wake or a finished delivery asked for a lease while the loop was leasing: it leases again after. */
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

  /** Callbacks just committed (decision 220): leases now, or WAKE_GAP_MS after the last lease began. */
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

  /**
   * A write of the store failed: the loop backs off, and the leased callbacks not started are let go (they
   * are leased again when their lease ends). None is sent until a write goes through again (a lease that
   * took callbacks, leaseMore): an attempt the store could not record would be made again by whoever leases
   * the callback next.
   */
  function letGo(err: unknown): number {
    buffer.length = 0;
    return storeFault.failed(err);
  }

  /** Starts leased callbacks while a lane is free; on stop too, they are this process's until their lease ends. */
  function pump(): void {
    while (inFlight < width && buffer.length > 0 && !storeFault.active) {
      const lease = buffer.shift()!;
      inFlight += 1;
      void deliverCallback(deps, lease)
        .then(
          // An attempt recorded is a write; a lease that ran out wrote nothing.
          (outcome) => outcome === 'attempted' && storeFault.recovered(),
          // The store could not record the attempt: the callback is leased again when its lease ends.
          (err: unknown) => void letGo(err),
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

  /** Leases callbacks once half of what it may hold is free; returns how many. */
  async function leaseMore(): Promise<number> {
    if (storeFault.waitMs() > 0 || held() > width) return 0;
    const now = deps.clock.now();
    // Outbox rows of callbacks written by an earlier release during a rolling upgrade: nothing runs them now.
    if (now.getTime() - retiredAt >= RETIRE_EVERY_MS) {
      retiredAt = now.getTime();
      await deps.store.outbox.retireQueue(queue, now);
    }
    const failures = storeFault.failures;
    const leases = await deps.store.callbacks.leaseDue(
      2 * width - held(),
      now.toISOString(),
      new Date(now.getTime() + leaseMs).toISOString(),
    );
    // A write failed while this lease was on its way (an attempt's record): the lease may have been made
    // before the store stopped writing, and proves nothing. Its callbacks are let go like the others.
    if (storeFault.failures !== failures) return 0;
    // A lease that took callbacks wrote: a fault is over. One that found none due wrote nothing and proves
    // nothing (SQLite commits it on a full disk); with nothing held either, nothing waits on the store, and
    // the queue stops backing off (a failure later is a new fault, logged as one).
    if (leases.length > 0) storeFault.recovered();
    else if (held() === 0) storeFault.recovered('no callback is due: the callbacks stop backing off');
    buffer.push(...leases);
    pump();
    return leases.length;
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
        delay = letGo(err);
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

  /** Resolves once nothing is held (while the store cannot write, nothing waits in the buffer: letGo). */
  const idle = () =>
    held() === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve));

  return {
    queue,
    start(): void {
      if (!stopping) return;
      stopping = false;
      loop = run();
    },
    /** Leases now rather than at the next poll: callbacks were just committed (decision 220). */
    wake: wakeSoon,
    /** Stops leasing; the callbacks already leased are delivered (at most twice the concurrency). */
    async stop(): Promise<void> {
      stopping = true;
      poke();
      await loop;
      await idle();
    },
    /** Delivers until no callback is due (tests, the CLI). */
    async drain(): Promise<void> {
      for (;;) {
        await idle();
        if ((await leaseMore()) === 0) return idle();
      }
    },
    async counts(): Promise<QueueCounts> {
      const backlog = await deps.store.ops.outboxBacklog();
      const waiting = backlog.find((b) => b.queue === queue)?.waiting ?? 0;
      return {
        queue,
        // Leased callbacks not yet being delivered wait too: their attempt has not been made.
        waiting: Math.max(0, waiting - inFlight),
        active: inFlight,
        delayed: 0,
        // A callback never fails or completes as a job: given up, it is dead (`amil callbacks list --failed`,
        // `amil_callbacks`); delivered, it shows on the dashboard.
        failed: 0,
        completed: 0,
      };
    },
  };
}

export type CallbackQueue = ReturnType<typeof createCallbackQueue>;
