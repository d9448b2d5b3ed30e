/**
 * The web composition root: the Deps of the web process and its Koa apps, one per port. Here, and only
 * here, ingest/ (what comes in) and reports/ (the read side) meet, so neither imports the other.
 */
import type Koa from 'koa';
import { HOSTS, type HostName } from '../core/config.ts';
import { createDeps } from '../core/bootstrap.ts';
import type { Deps } from '../core/deps.ts';
import { createHttpApp, type MountRoutes } from '../core/http/app.ts';
import { anonymousLimits } from '../ingest/anonymous-limits.ts';
import { mountBankWebhook } from '../ingest/bank-webhook/route.ts';
import { mountDemoMerchant } from '../ingest/checkout/demo-merchant.ts';
import { htmlErrorPage } from '../ingest/checkout/error-pages.ts';
import type { HtmlErrorPage } from '../core/http/problem.ts';
import { mountFrontDoor } from '../ingest/checkout/front-door.ts';
import { mountUnsignedQr } from '../ingest/checkout/qr-route.ts';
import { mountCheckout } from '../ingest/checkout/routes.ts';
import { mountSandbox } from '../ingest/checkout/sandbox-routes.ts';
import { queueBoard } from '../pipeline/queue-board.ts';
import { mountDashboard } from '../reports/dashboard/routes.ts';
import { dashboardErrorPage } from '../reports/dashboard/error-page.ts';
import { mountQrCodes } from '../reports/qr/routes.ts';
import { mountReconciliationReports } from '../reports/reconciliation-routes.ts';
import { mountReports } from '../reports/routes.ts';

/** The routes of each host. */
const HOST_ROUTES: Record<HostName, readonly MountRoutes[]> = {
  base: [mountCheckout, mountUnsignedQr, mountSandbox, mountDemoMerchant, mountFrontDoor],
  reports: [mountReports, mountQrCodes, mountReconciliationReports, mountDashboard],
  pay: [mountBankWebhook],
};

export interface WebAppOptions {
  /** True once the process is stopping (readiness then answers 503). */
  isShuttingDown?: () => boolean;
  /** Run before the routes (the queue board). */
  middleware?: readonly Koa.Middleware[];
}

/** One Koa app serving the given hosts' routes. */
export function createWebApp(deps: Deps, hosts: readonly HostName[], options: WebAppOptions = {}): Koa {
  // The per-client limits of the anonymous pages run before any route, so a refused request costs nothing.
  const limits = hosts.includes('base') ? [anonymousLimits(deps)] : [];
  return createHttpApp(deps, {
    mounts: hosts.flatMap((host) => HOST_ROUTES[host]),
    isShuttingDown: options.isShuttingDown,
    middleware: [...limits, ...(options.middleware ?? [])],
    // A browser's refusal page: the dashboard's for staff under /dashboard/, the payer's everywhere else.
    htmlErrorPage: byPath(htmlErrorPage(deps)),
  });
}

function byPath(payerPage: HtmlErrorPage): HtmlErrorPage {
  return (ctx, error) =>
    ctx.path === '/dashboard' || ctx.path.startsWith('/dashboard/')
      ? dashboardErrorPage(ctx, error)
      : payerPage(ctx, error);
}

/** A Koa app and where it listens: the shape `listen` (core/http/serve.ts) takes. */
export interface WebApp {
  /** Its hosts joined by '+', e.g. `base+reports+pay`. */
  name: string;
  hosts: readonly HostName[];
  app: Koa;
  host: string;
  port: number;
  /** The variable that chooses its port, named when the port is taken. */
  setting: string;
}

export interface AppOptions {
  isShuttingDown?: () => boolean;
  /** Bull Board on the reports host (Redis mode, with ADMIN_PASSWORD): the server's, not a test's. */
  queueBoard?: boolean;
  /** Every host on one app on PORT, whatever the *_PORT settings say: a test's one address. */
  onePort?: boolean;
}

export interface App {
  deps: Deps;
  /** One app per port: each host with a port of its own (BASE_PORT, ...), then the hosts sharing PORT. */
  web: readonly WebApp[];
  /** Releases what the app holds (board, mailer, HTTP clients, QR threads, limits, store). */
  close(): Promise<void>;
}

/**
 * Builds the web process: its Deps from the environment (the process's unless one is given) and overrides,
 * and its Koa apps. The server listens on them; tests and benchmarks build the same app over a temp store.
 */
export function createApp(
  env?: Readonly<Record<string, string | undefined>>,
  depsOverrides: Partial<Deps> = {},
  options: AppOptions = {},
): App {
  const deps = createDeps(env, depsOverrides);
  const { config } = deps;
  const board = options.queueBoard ? queueBoard(deps) : undefined;
  const build = (hosts: readonly HostName[]) =>
    createWebApp(deps, hosts, {
      isShuttingDown: options.isShuttingDown,
      middleware: board && hosts.includes('reports') ? [board.middleware] : [],
    });
  const own = options.onePort ? [] : HOSTS.filter((h) => config.hostPorts[h] !== undefined);
  const shared = HOSTS.filter((h) => !own.includes(h));
  const web: WebApp[] = own.map((host) => ({
    name: host,
    hosts: [host],
    app: build([host]),
    host: config.host,
    port: config.hostPorts[host] ?? 0,
    setting: `${host.toUpperCase()}_PORT`,
  }));
  if (shared.length > 0) {
    web.push({
      name: shared.join('+'),
      hosts: shared,
      app: build(shared),
      host: config.host,
      port: config.port,
      setting: 'PORT',
    });
  }
  return {
    deps,
    web,
    async close() {
      await board?.close();
      deps.mailer.close();
      await deps.callbacks.close();
      await deps.qr.close();
      await deps.limits.close();
      await deps.store.close();
    },
  };
}
