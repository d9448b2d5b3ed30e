import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';

/**
 * A store that cannot write (a full disk, an I/O error, a lock held too long), as seen by what runs jobs
 * straight from the store: the in-process runtime and the callbacks' queue. Recording a failed attempt fails
 * too then, so without this they would retry at once, for ever: they back off instead (doubling, capped),
 * and log the condition once per interval, not per attempt.
 */
export function createStoreFault(log: Logger, pipeline: Config['pipeline'], pollMs: number) {
  // The first pause: a poll interval, or the retry policy's first delay when longer.
  const options = {
    firstDelayMs: Math.max(pollMs, pipeline.retryBaseMs),
    maxDelayMs: pipeline.storeFaultMaxMs,
    logEveryMs: pipeline.storeFaultLogMs,
  };
  let fault:
    { since: number; failures: number; delayMs: number; retryAt: number; loggedAt: number } | undefined;
  /** Failures seen so far, ever: a write begun before one of them cannot prove the store came back. */
  let failuresSeen = 0;
  return {
    /** A write of the store failed: the next look waits; returns how long. */
    failed(err: unknown): number {
      failuresSeen += 1;
      const now = Date.now();
      if (!fault) {
        const delayMs = Math.min(options.firstDelayMs, options.maxDelayMs);
        fault = { since: now, failures: 1, delayMs, retryAt: now + delayMs, loggedAt: now };
        log.error({ err }, 'the store cannot write: the pipeline backs off until it can');
        return delayMs;
      }
      fault.failures += 1;
      fault.delayMs = Math.min(fault.delayMs * 2, options.maxDelayMs);
      fault.retryAt = now + fault.delayMs;
      if (now - fault.loggedAt >= options.logEveryMs) {
        fault.loggedAt = now;
        log.error(
          {
            err,
            failures: fault.failures,
            since: new Date(fault.since).toISOString(),
            retry_in_ms: fault.delayMs,
          },
          'the store still cannot write',
        );
      }
      return fault.delayMs;
    },
    /**
     * A write went through: the fault, if any, is over. With `note`, what ended it was not a write (nothing
     * was left to write): the line says that instead.
     */
    recovered(note?: string): void {
      if (!fault) return;
      log.info(
        { failures: fault.failures, lasted_ms: Date.now() - fault.since },
        note ?? 'the store writes again: the pipeline resumes',
      );
      fault = undefined;
    },
    /** How many failures there have been: unchanged across a write, the write began after the last one. */
    get failures(): number {
      return failuresSeen;
    },
    /** While backing off: how long until the next try (0 when there is no fault or it is time). */
    waitMs(): number {
      return fault ? Math.max(0, fault.retryAt - Date.now()) : 0;
    },
    get active(): boolean {
      return fault !== undefined;
    },
  };
}
