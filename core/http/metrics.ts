import type { AppRouter } from './state.ts';
import type { Context, Middleware, Next } from 'koa';
import type { Deps } from '../deps.ts';
import { DomainError } from '../errors.ts';
import { requireAdmin } from './admin-auth.ts';

/**
 * Times every request into the HTTP histogram, labelled by the route template the router matched (never the
 * raw path: one label value per route, however many order numbers pass through). Outermost, so it sees the
 * status the error path wrote.
 */
export function httpMetrics(deps: Deps): Middleware {
  return async (ctx: Context, next: Next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      deps.metrics.observeHttp(
        typeof route === 'string' ? route : 'unmatched',
        ctx.method,
        ctx.status,
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    }
  };
}

/**
 * GET /metrics in the Prometheus text format, behind the admin password (HTTP Basic, user `admin`), as
 * the queue board is: it names queues, agencies and volumes. Without ADMIN_PASSWORD there is none (404).
 */
export function mountMetrics(router: AppRouter, deps: Deps): void {
  const password = deps.config.adminPassword;
  const guard = password
    ? requireAdmin(password)
    : () => Promise.reject(new DomainError('not-found', 'Set ADMIN_PASSWORD to serve /metrics.'));
  router.get('/metrics', guard, async (ctx) => {
    ctx.type = deps.metrics.registry.contentType;
    ctx.body = await deps.metrics.registry.metrics();
  });
}
