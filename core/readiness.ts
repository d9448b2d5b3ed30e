import type { Clock } from './clock.ts';
import { clockOffsetProblem, measureClockOffset } from './clock-offset.ts';
import type { Store } from './store/index.ts';

/** One dependency's answer to the readiness probe. */
export interface ReadinessResult {
  dependency: string;
  ok: boolean;
  /** Why it failed, for ops (logged and shown in the 503). */
  error?: string;
}

/** The dependencies a process needs to do its work; the store is always one of them. */
export interface Readiness {
  /** Adds a dependency (e.g. Redis in Redis mode); the check throws when it is not usable. */
  add(dependency: string, check: () => Promise<void>): void;
  /** Runs every check; one failing never hides another. */
  check(): Promise<ReadinessResult[]>;
}

/**
 * Readiness proves the work can be done, not only that the process runs: the store must commit a write (a
 * full disk or read-only file still answers reads, while the webhook would fail), and what was added must
 * answer too (on PostgreSQL, this machine's clock: clockReadiness).
 */
export function createReadiness(store: Store, clock: Clock): Readiness {
  const checks = new Map<string, () => Promise<void>>([['store', () => store.ops.heartbeat(clock.now())]]);
  return {
    add(dependency, check) {
      checks.set(dependency, check);
    },
    async check() {
      return Promise.all(
        [...checks].map(async ([dependency, check]) => {
          try {
            await check();
            return { dependency, ok: true };
          } catch (err) {
            return { dependency, ok: false, error: (err as Error).message ?? String(err) };
          }
        }),
      );
    },
  };
}

/**
 * The readiness check of this machine's clock against PostgreSQL's (decision 259): fails beyond the limit. A
 * database that does not answer is the store check's to report, not a clock that is off.
 */
export function clockReadiness(store: Store): () => Promise<void> {
  return async () => {
    const problem = clockOffsetProblem(await measureClockOffset(store).catch(() => undefined));
    if (problem) throw new Error(problem);
  };
}
