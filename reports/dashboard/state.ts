/** What every dashboard page knows about who is asking: set by the session middleware (guards.ts). */
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
