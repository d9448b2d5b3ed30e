import type { Logger } from '../logger.ts';
import type { Store } from './index.ts';
import { isStoreOutage } from './outage.ts';

/** The first pause after a failed try, doubled after each up to the longest. */
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5000;
/** How often the wait is logged again while it lasts (its first failure is logged at once). */
const LOG_EVERY_MS = 30_000;

/**
 * Waits until the store answers, its migrations applied, trying again for as long as the database cannot
 * be reached (an outage: not started yet, recovering from a crash, a name its DNS does not give yet). A
 * process started before its database (a site powered on at once, a compose file) so comes up with it
 * instead of exiting. Anything else (a wrong password, a wrong collation, a migration refused) fails at
 * once: waiting would not mend it.
 */
export async function waitForStore(store: Store, log: Logger): Promise<void> {
  const since = Date.now();
  let delayMs = FIRST_DELAY_MS;
  let loggedAt: number | undefined;
  for (;;) {
    try {
      await store.ping();
      if (loggedAt !== undefined)
        log.info({ waited_ms: Date.now() - since }, 'the database answers: starting');
      return;
    } catch (err) {
      if (!isStoreOutage(err)) throw err;
      if (loggedAt === undefined || Date.now() - loggedAt >= LOG_EVERY_MS) {
        loggedAt = Date.now();
        log.warn({ err, waited_ms: loggedAt - since }, 'waiting for the database: it cannot be reached yet');
      }
    }
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    delayMs = Math.min(delayMs * 2, MAX_DELAY_MS);
  }
}
