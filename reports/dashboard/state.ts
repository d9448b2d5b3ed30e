/** What every dashboard page knows about who is asking: set by the session middleware (guards.ts). */
import type { AppState } from '../../core/http/state.ts';
import type { DashboardRole } from '../../core/store/index.ts';

export type { DashboardRole } from '../../core/store/index.ts';

/** `ctx.state.dashboard` on every page under /dashboard/a/:agency/. */
export interface DashboardState {
  user: { id: number; email: string; name: string };
  /** The agency of the page (`:agency`), one the user is a member of. */
  agency: string;
  /** The user's role in that agency. */
  role: DashboardRole;
  /** Every agency of the user, in code order (the agency switcher). */
  agencies: { code: string; name: string; role: DashboardRole }[];
  /** The session's CSRF token: csrfField(state) puts it in a form. */
  csrf: string;
}

declare module '../../core/http/state.ts' {
  interface AppState {
    /** reports/dashboard/guards.ts: the signed-in member of the agency in the path. */
    dashboard?: DashboardState;
  }
}

/** The state the session guard set, or undefined outside it. */
export function dashboardStateIfAny(ctx: { state: AppState }): DashboardState | undefined {
  return ctx.state.dashboard;
}

/** The state the session guard set; a page mounted outside the guard is a bug, not a request to answer. */
export function dashboardStateOf(ctx: { state: AppState }): DashboardState {
  const state = ctx.state.dashboard;
  if (!state) throw new Error('a dashboard page was mounted outside the session guard');
  return state;
}
