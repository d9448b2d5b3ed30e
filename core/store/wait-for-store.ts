import type { Logger } from '../logger.ts';
import type { Store } from './index.ts';
import { isStoreOutage } from './outage.ts';

export interface StoreWait {
  /** The first pause after a failed try; doubled after each, up to `maxDelayMs`. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** How often the wait is logged again while it lasts (its first failure is logged at once). */
  logEveryMs: number;
}

const DEFAULT_WAIT: StoreWait = { firstDelayMs: 250, maxDelayMs: 5000, logEveryMs: 30_000 };

/**
 * Waits until the store answers, its migrations applied, trying again for as long as the database cannot
 * be reached (an outage: not started yet, recovering from a crash, a name its DNS does not give yet). A
 * process started before its database (a site powered on at once, a compose file) so comes up with it
 * instead of exiting. Anything else (a wrong password, a wrong collation, a migration refused) fails at
 * once: waiting would not mend it.
 */
export async function waitForStore(store: Store, log: Logger, wait: StoreWait = DEFAULT_WAIT): Promise<void> {
  const since = Date.now();
  let delayMs = wait.firstDelayMs;
  let loggedAt: number | undefined;
  for (;;) {
    try {
      await store.ping();
      if (loggedAt !== undefined)
        log.info({ waited_ms: Date.now() - since }, 'the database answers: starting');
      return;
    } catch (err) {
      if (!isStoreOutage(err)) throw err;
      if (loggedAt === undefined || Date.now() - loggedAt >= wait.logEveryMs) {
        loggedAt = Date.now();
        log.warn({ err, waited_ms: loggedAt - since }, 'waiting for the database: it cannot be reached yet');
      }
    }
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    delayMs = Math.min(delayMs * 2, wait.maxDelayMs);
  }
}
