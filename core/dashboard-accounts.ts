/** Dashboard users as ops and the demo seeding make them: checked input, hashed password, memberships. */
import { isEmailAddress } from './email.ts';
import { generatePassword, hashPassword } from './passwords.ts';
import type { DashboardRole, DashboardUser, Store } from './store/index.ts';

/** Shorter passwords are refused: people choose these, and the sign-in limits only slow guessing down. */
export const MIN_DASHBOARD_PASSWORD = 12;

/** Why an e-mail address is refused, or undefined when it is fine. */
export function emailProblem(email: string): string | undefined {
  return isEmailAddress(email) ? undefined : `not an e-mail address: ${email}`;
}

/** Why a password is refused, or undefined when it is fine. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < MIN_DASHBOARD_PASSWORD)
    return `a password has at least ${MIN_DASHBOARD_PASSWORD} characters`;
  if (password.length > 1024) return 'a password has at most 1024 characters';
  return undefined;
}

/**
 * Creates a dashboard user; without a password, a random one is made (returned, to be shown once). Throws
 * with the reason when the input is refused, an agency is unknown or the e-mail address is taken.
 */
export async function addDashboardUser(
  store: Store,
  input: {
    email: string;
    name: string;
    password?: string;
    memberships: { agency: string; role: DashboardRole }[];
    now: Date;
  },
): Promise<{ user: DashboardUser; password: string }> {
  const email = input.email.trim().toLowerCase();
  const password = input.password ?? generatePassword();
  const problem = emailProblem(email) ?? passwordProblem(password);
  if (problem) throw new Error(problem);
  for (const m of input.memberships) {
    if (!(await store.agencies.get(m.agency))) throw new Error(`no agency ${m.agency}`);
  }
  const user = await store.dashboardUsers.create({
    email,
    name: input.name.trim() || email,
    passwordHash: await hashPassword(password),
    memberships: input.memberships,
    now: input.now,
  });
  if (!user) throw new Error(`a dashboard user ${email} exists`);
  return { user, password };
}
