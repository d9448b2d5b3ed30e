import Koa from 'koa';
import { problemMiddleware, type HtmlErrorPage } from './problem.ts';
import { requestContext } from './request-context.ts';
import type { Deps } from '../deps.ts';
import type { AppRouter } from './state.ts';
import { createRouter } from './router.ts';
import { buildOpenApi } from '../../schemas/openapi.ts';
import { version } from '../version.ts';
import { mountHealth } from './health.ts';
import { httpMetrics, mountMetrics } from './metrics.ts';

/** A host's routes, mounted by createHttpApp. */
export type MountRoutes = (router: AppRouter, deps: Deps) => void;

export interface HttpAppOptions {
  /** The routes of each host this app serves. */
  mounts: readonly MountRoutes[];
  /** Set while shutting down, so /health/ready answers 503 and load balancers move away. */
  isShuttingDown?: () => boolean;
  /** Whole sub-apps mounted before the routes (e.g. the queue board), behind the shared error path. */
  middleware?: readonly Koa.Middleware[];
  /** How a browser is shown a refusal; without it, browsers get problem+json too. */
  htmlErrorPage?: HtmlErrorPage;
}

/**
 * A Koa app with the shared middleware (request id and logging, the one error path) and the routes
 * every host serves (/health/live, /health/ready, /metrics, /api/openapi.json), plus the given hosts' routes.
 */
export function createHttpApp(deps: Deps, options: HttpAppOptions): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  app.silent = true;
  const router = createRouter();

  const openApi = JSON.stringify(
    buildOpenApi({
      version,
      bankAgencyCodes: Object.keys(deps.config.webhook.routes),
      maxRecords: deps.config.webhook.maxRecords,
      maxBodyBytes: deps.config.webhook.maxBodyBytes,
    }),
  );
  router.get('/api/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApi;
  });
  mountHealth(router, deps, options.isShuttingDown);
  mountMetrics(router, deps);
  for (const mount of options.mounts) mount(router, deps);

  app.use(httpMetrics(deps));
  app.use(requestContext(deps.logger));
  app.use(problemMiddleware(deps.logger, options.htmlErrorPage));
  for (const middleware of options.middleware ?? []) app.use(middleware);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
