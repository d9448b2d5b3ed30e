/** The dashboard's read pages (overview, payments, bank postings, callbacks, reconciliation). */
import type Router from '@koa/router';
import type { Deps } from '../../../core/deps.ts';

/**
 * Registers the pages on the agency router (prefix `/dashboard/a/:agency`): the session, membership and
 * CSRF guards already ran, so `ctx.state.dashboard` is set.
 */
export function registerDashboardPages(_router: Router, _deps: Deps): void {}
