/** The API access page (admin): report tokens, the API key, callback hosts and report recipients. */
import type Router from '@koa/router';
import type { Deps } from '../../core/deps.ts';
import { requireAdmin, sendHtml } from './guards.ts';
import { dashboardPage } from './layout.ts';
import type { DashboardState } from './state.ts';

/** GET /dashboard/a/:agency/api-access and its forms. */
export function registerApiAccess(router: Router, _deps: Deps): void {
  router.get('/api-access', requireAdmin, (ctx) => {
    const state = ctx.state.dashboard as DashboardState;
    sendHtml(ctx, 200, dashboardPage(state, { title: 'API access', active: 'api-access', body: '' }));
  });
}
