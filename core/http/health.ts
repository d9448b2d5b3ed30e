import { DomainError } from '../errors.ts';
import type { Deps } from '../deps.ts';
import type { AppContext, AppRouter } from './state.ts';

/** What a failing dependency's 503 says; the cause itself is logged, never shown. */
const FAILURES: Record<string, string> = {
  store: 'The store cannot commit a write (disk full, read-only, or locked).',
  redis: 'Redis does not answer.',
  clock: "This machine's clock is more than a second away from the database's.",
};

/**
 * GET /health/live: the process runs and its event loop answers (no I/O: a sick dependency must not get a
 * healthy process restarted). GET /health/ready: the process can do its work now (the store commits a
 * write; Redis answers in Redis mode), 503 naming each failing dependency; a load balancer sends traffic
 * only while it is 200. GET /health stays as an alias of ready for existing probes.
 */
export function mountHealth(router: AppRouter, deps: Deps, isShuttingDown?: () => boolean): void {
  router.get('/health/live', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  const ready = async (ctx: AppContext) => {
    if (isShuttingDown?.()) throw new DomainError('unavailable', 'Shutting down.');
    const results = await deps.readiness.check();
    const failing = results.filter((r) => !r.ok);
    if (failing.length > 0) {
      const log = ctx.state.log ?? deps.logger;
      log.warn({ failing }, 'not ready');
      throw new DomainError(
        'unavailable',
        `Not ready: ${failing.map((f) => f.dependency).join(', ')}.`,
        failing.map((f) => ({
          pointer: `/checks/${f.dependency}`,
          message: FAILURES[f.dependency] ?? `${f.dependency} does not answer.`,
        })),
      );
    }
    ctx.body = { status: 'ok' };
  };
  router.get('/health/ready', ready);
  router.get('/health', ready);
}
