import type { Deps } from '../core/deps.ts';
import { createPoller } from './poller.ts';
import { createClockWatch } from './clock-watch.ts';

/**
 * How often the appended count rows are folded (decisions 245, 246, 248). Between two folds a read sums what
 * was appended meanwhile: at most ten seconds of settled callbacks, payments or ledger appends, a few
 * milliseconds' worth at the rates this machine reaches.
 */
const FOLD_EVERY_MS = 10_000;

/**
 * The store's upkeep on a timer, in whichever process runs the pipeline (the web process in embedded mode,
 * the workers in Redis mode): folds PostgreSQL's appended callback counts, payment day counts and ledger day
 * counts (SQLite has none), and watches this machine's clock against PostgreSQL's (clock-watch.ts). Several
 * processes may run it; one folds at a time and the others skip. A failure is logged and tried again at the
 * next tick.
 */
export function createStoreUpkeep(deps: Deps) {
  const log = deps.logger.child({ component: 'store-upkeep' });
  const watchClock = createClockWatch(deps);
  return createPoller(
    () =>
      Promise.all([
        watchClock(),
        deps.store.callbacks.foldCounts(),
        deps.store.orders.foldDayCounts(),
        deps.store.ledger.foldDayCounts(),
      ]).then(
        () => ({ more: false }),
        (err: unknown) => {
          log.warn({ err }, 'folding the count rows failed; trying again later');
          return { more: false };
        },
      ),
    FOLD_EVERY_MS,
  );
}
