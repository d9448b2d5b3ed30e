import type { OutboxRow } from '../core/store/index.ts';

/**
 * Calls `look` now and again: at once when it reports more work, else after its `delayMs` or `pollMs`. `look` must not
 * reject (it logs its own failures). stop() waits for a look in progress, until `until` (epoch ms) when given:
 * a look stuck on a dependency that does not answer is then left behind.
 */
export function createPoller(look: () => Promise<{ more: boolean; delayMs?: number }>, pollMs: number) {
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  let running: Promise<unknown> | undefined;

  function schedule(delay: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      const current = look();
      running = current;
      void current.then(({ more, delayMs }) => schedule(more ? 0 : (delayMs ?? pollMs)));
    }, delay);
  }

  return {
    start(): void {
      stopped = false;
      schedule(0);
    },
    /** Looks again now (or after `delayMs`) rather than at the next tick. */
    poke(delayMs = 0): void {
      schedule(delayMs);
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
