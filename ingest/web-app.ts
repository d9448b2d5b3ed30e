import type Koa from 'koa';
import type { HostName } from '../core/config.ts';
import type { Deps } from '../core/deps.ts';
import { createHttpApp, type MountRoutes } from '../core/http/app.ts';
import { mountBankWebhook } from './bank-webhook/route.ts';
import { mountCheckout } from './checkout/routes.ts';
import { mountUnsignedQr } from './checkout/qr-route.ts';
import { mountDemoMerchant } from './checkout/demo-merchant.ts';
import { mountSandbox } from './checkout/sandbox-routes.ts';
import { mountReports } from '../reports/routes.ts';
import { mountReconciliationReports } from '../reports/reconciliation-routes.ts';
import { mountQrCodes } from '../reports/qr/routes.ts';
import { anonymousLimits } from './anonymous-limits.ts';
import { htmlErrorPage } from './checkout/error-pages.ts';
import { mountFrontDoor } from './checkout/front-door.ts';

/** The routes of each host. */
const HOST_ROUTES: Record<HostName, readonly MountRoutes[]> = {
  base: [mountCheckout, mountUnsignedQr, mountSandbox, mountDemoMerchant, mountFrontDoor],
  reports: [mountReports, mountQrCodes, mountReconciliationReports],
  pay: [mountBankWebhook],
};

/**
 * The web composition root: one Koa app serving the given hosts' routes. The server serves every host on
 * one port by default; tests build the same app around a temporary store.
 */
export function createWebApp(
  deps: Deps,
  hosts: readonly HostName[],
  options: { isShuttingDown?: () => boolean; middleware?: readonly Koa.Middleware[] } = {},
): Koa {
  // The per-client limits of the anonymous pages run before any route, so a refused request costs nothing.
  const limits = hosts.includes('base') ? [anonymousLimits(deps)] : [];
  return createHttpApp(deps, {
    mounts: hosts.flatMap((host) => HOST_ROUTES[host]),
    isShuttingDown: options.isShuttingDown,
    middleware: [...limits, ...(options.middleware ?? [])],
    htmlErrorPage: htmlErrorPage(deps),
  });
}
