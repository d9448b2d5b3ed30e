/**
 * Signing in: the password (then the TOTP code) checked behind two limits of failures, per e-mail address
 * and per client, so guessing one user's password and spraying many users both stop early.
 */
import type { Deps } from '../../core/deps.ts';
import type { ClientLimit } from '../../core/http/rate-limit.ts';
import { hashPassword, verifyPassword } from '../../core/passwords.ts';
import type { SessionGrant } from '../../core/store/index.ts';
import { totpStep } from '../../core/totp.ts';

export type SignInOutcome =
  // `grant`: what was checked, which must still hold when the session starts (startSession).
  | { outcome: 'signed-in'; userId: number; needsCode: boolean; grant: SessionGrant }
  | { outcome: 'refused' }
  | { outcome: 'limited'; retryAfterSeconds: number };

let dummyHash: Promise<string> | undefined;

/**
 * One attempt takes a point from both budgets before anything is checked; a success gives them back. An
 * unknown address costs the same scrypt as a known one, so timing does not tell which addresses exist.
 */
async function limited<T extends { ok: boolean }>(
  deps: Deps,
  keys: { user: string; client: string },
  attempt: () => Promise<T>,
): Promise<T | { outcome: 'limited'; retryAfterSeconds: number }> {
  const { dashboardLoginPerUser: perUser, dashboardLoginPerClient: perClient } = deps.limits;
  const taken: [ClientLimit, string][] = [];
  for (const [limit, key] of [
    [perClient, keys.client],
    [perUser, keys.user],
  ] as const) {
    if (!limit) continue;
    const { retryAfterSeconds } = await limit.consume(key);
    if (retryAfterSeconds !== undefined) return { outcome: 'limited', retryAfterSeconds };
    taken.push([limit, key]);
  }
  const result = await attempt();
  if (result.ok) for (const [limit, key] of taken) await limit.reward(key);
  return result;
}

/** Checks an e-mail address and password; a disabled user is refused like a wrong password. */
export async function signInWithPassword(
  deps: Deps,
  input: { email: string; password: string; client: string },
): Promise<SignInOutcome> {
  const email = input.email.trim().toLowerCase();
  const result = await limited(deps, { user: email, client: input.client }, async () => {
    const user = email.length <= 254 ? await deps.store.dashboardUsers.byEmail(email) : undefined;
    dummyHash ??= hashPassword('no user has this password');
    const ok = await verifyPassword(input.password.slice(0, 1024), user?.passwordHash ?? (await dummyHash));
    return user && ok && user.disabledAt === null
      ? { ok: true as const, userId: user.id, needsCode: user.totp, passwordHash: user.passwordHash }
      : { ok: false as const };
  });
  if ('outcome' in result) return result;
  return result.ok
    ? {
        outcome: 'signed-in',
        userId: result.userId,
        needsCode: result.needsCode,
        grant: { passwordHash: result.passwordHash },
      }
    : { outcome: 'refused' };
}

/**
 * Checks the TOTP code of a user whose password was right (`pending`: the idSha256 of the half-open
 * session); each code is accepted once.
 */
export async function signInWithCode(
  deps: Deps,
  input: { userId: number; pending: string; code: string; client: string },
): Promise<SignInOutcome> {
  // The session names the user by id; the secret comes with the credentials, found by address.
  const email = (await deps.store.dashboardUsers.get(input.userId))?.email ?? '';
  const user = await deps.store.dashboardUsers.byEmail(email);
  const result = await limited(
    deps,
    // The same budget as the password's: a wrong code is one more guess at this account.
    { user: email.toLowerCase(), client: input.client },
    async () => {
      if (!user?.totpSecret || user.disabledAt !== null) return { ok: false };
      const step = totpStep(user.totpSecret, input.code.trim(), deps.clock.now());
      const ok = step !== undefined && (await deps.store.dashboardUsers.useTotpStep(user.id, step));
      return { ok };
    },
  );
  if ('outcome' in result) return result;
  return result.ok
    ? { outcome: 'signed-in', userId: input.userId, needsCode: false, grant: { completing: input.pending } }
    : { outcome: 'refused' };
}
