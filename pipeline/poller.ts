import type { OutboxRow } from '../core/store/index.ts';

/**
 * A wake (rows just committed: decision 220) looks at once, but no sooner than this after the last look
 * began: under a stream of payments a process looks every 25 ms, not once per payment.
 */
export const WAKE_GAP_MS = 25;

/**
 * Calls `look` now and again: at once when it reports more work, else after its `delayMs` or `pollMs`. `look` must not
 * reject (it logs its own failures). Looks never overlap: a poke during a look asks for one more right after
 * it. stop() waits for a look in progress, until `until` (epoch ms) when given: a look stuck on a dependency
 * that does not answer is then left behind.
 */
export function createPoller(look: () => Promise<{ more: boolean; delayMs?: number }>, pollMs: number) {
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  let running: Promise<unknown> | undefined;
  let looking = false;
  /** The delay a poke asked for during a look, applied once it ends. */
  let pokedDelay: number | undefined;
  /** When the pending look is due, and when the last look began (epoch ms). */
  let dueAt = 0;
  let lookedAt = 0;

  function schedule(delay: number): void {
    if (stopped) return;
    clearTimeout(timer);
    dueAt = Date.now() + delay;
    timer = setTimeout(lookNow, delay);
  }

  function lookNow(): void {
    timer = undefined;
    lookedAt = Date.now();
    looking = true;
    pokedDelay = undefined;
    const current = look();
    running = current;
    void current.then(({ more, delayMs }) => {
      looking = false;
      const next = more ? 0 : (delayMs ?? pollMs);
      schedule(pokedDelay === undefined ? next : Math.min(next, pokedDelay));
    });
  }

  /** Looks again now (or after `delayMs`) rather than at the next tick; after the look in progress, if any. */
  function poke(delayMs = 0): void {
    if (looking) pokedDelay = Math.min(pokedDelay ?? delayMs, delayMs);
    // A look already due sooner stays as it is.
    else if (timer === undefined || Date.now() + delayMs < dueAt) schedule(delayMs);
  }

  return {
    start(): void {
      stopped = false;
      schedule(0);
    },
    poke,
    /** Rows just committed: looks now, or `gapMs` after the last look began, whichever is later. */
    wake(gapMs = WAKE_GAP_MS): void {
      poke(Math.max(0, lookedAt + gapMs - Date.now()));
    },
    async stop(until?: number): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      if (until === undefined) await running;
      else if (running) await settlesBy(running, until);
    },
  };
}

/**
 * Waits for `promise` until `until` (epoch ms) at most; whether it settled by then. It goes on either way
 * (a rejection after that is ignored): this only stops waiting for it.
 */
export async function settlesBy(promise: Promise<unknown>, until: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = promise.then(
    () => true,
    () => true,
  );
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, until - Date.now()));
  });
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Outbox rows grouped by queue, each group in outbox order. */
export function byQueue(rows: readonly OutboxRow[]): Map<string, OutboxRow[]> {
  const groups = new Map<string, OutboxRow[]>();
  for (const row of rows) {
    const group = groups.get(row.queue);
    if (group) group.push(row);
    else groups.set(row.queue, [row]);
  }
  return groups;
}
