/** The dashboard's audit log: every admin action, readable by the agency's users on the audit page. */
import type { Deps } from '../../core/deps.ts';
import type { DashboardState } from './state.ts';

/** Records what the signed-in user did in the page's agency (`action` like `token.mint`, `target` its object). */
export async function recordAudit(
  deps: Deps,
  state: DashboardState,
  action: string,
  target: string,
  detail?: object,
): Promise<void> {
  await deps.store.dashboardUsers.recordAudit({
    at: deps.clock.now().toISOString(),
    agency: state.agency,
    userId: state.user.id,
    userEmail: state.user.email,
    action,
    target,
    detail: detail === undefined ? null : { ...detail },
  });
}
