import type { Deps } from '../core/deps.ts';
import { createPoller } from './poller.ts';

/**
 * How often the callback count rows are folded (decision 245). Between two folds a dashboard view sums
 * what the deliveries appended meanwhile: a few rows per statement, so well under a millisecond's worth
 * at the rates this machine delivers.
 */
const FOLD_EVERY_MS = 10_000;

/**
 * The store's upkeep on a timer, in whichever process runs the pipeline (the web process in embedded mode,
 * the workers in Redis mode): folds the callback count rows and the payment day-count rows (PostgreSQL). Several processes may run it; one folds at a
 * time and the others skip. A failure is logged and tried again at the next tick.
 */
export function createStoreUpkeep(deps: Deps) {
  const log = deps.logger.child({ component: 'store-upkeep' });
  return createPoller(
    () =>
      Promise.all([deps.store.callbacks.foldCounts(), deps.store.orders.foldDayCounts()]).then(
        () => ({ more: false }),
        (err: unknown) => {
          log.warn({ err }, 'folding the count rows failed; trying again later');
          return { more: false };
        },
      ),
    FOLD_EVERY_MS,
  );
}
