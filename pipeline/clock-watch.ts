import { clockOffsetProblem, measureClockOffset } from '../core/clock-offset.ts';
import type { Deps } from '../core/deps.ts';

/**
 * Watches this machine's clock against PostgreSQL's in the processes that run the pipeline (decision 259): a
 * worker has no readiness probe, so it says so in its log, as an error when the offset goes past the limit
 * and at info when it comes back, once each (not at every look). A look that fails is the store's problem,
 * logged by what else failed with it: this only watches the clock.
 */
export function createClockWatch(deps: Deps) {
  const log = deps.logger.child({ component: 'clock' });
  let off = false;
  return async function look(): Promise<void> {
    const offset = await measureClockOffset(deps.store).catch(() => undefined);
    if (!offset) return;
    const problem = clockOffsetProblem(offset);
    const fields = {
      offset_ms: Math.round(offset.offsetMs),
      uncertainty_ms: Math.round(offset.uncertaintyMs),
    };
    if (problem && !off)
      log.error(fields, `${problem}; leases between machines and recorded times may be wrong`);
    else if (!problem && off) log.info(fields, "this machine's clock agrees with the database's again");
    off = problem !== undefined;
  };
}
