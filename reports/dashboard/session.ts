/**
 * Dashboard sessions: a random id in a signed cookie, the session itself in the store (so it can be revoked),
 * with an idle and an absolute expiry. The cookie is HttpOnly, SameSite=Lax, and Secure but on a laptop's
 * loopback over http (which would otherwise never get it back).
 */
import { createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { isLoopback } from '../../core/config/production.ts';
import type { Config } from '../../core/config.ts';
import type { Deps } from '../../core/deps.ts';
import { constantTimeEqual } from '../../core/constant-time.ts';
import type { DashboardSession, SessionGrant } from '../../core/store/index.ts';

export const SESSION_COOKIE = 'amil_session';
/** The sign-in form's CSRF token (double submit): there is no session yet to hold it. */
export const LOGIN_COOKIE = 'amil_login';
const COOKIE_PATH = '/dashboard';
/** A session is marked seen at most this often: one write a minute, not one per page. */
const TOUCH_EVERY_MS = 60_000;

const keys = new WeakMap<Config, Buffer>();

/** DASHBOARD_SESSION_SECRET, or a key derived from REPORT_TOKEN_SECRET (never the same bytes). */
function keyOf(config: Config): Buffer {
  let key = keys.get(config);
  if (!key) {
    key = config.dashboard.sessionSecret
      ? Buffer.from(config.dashboard.sessionSecret)
      : Buffer.from(hkdfSync('sha256', config.reportTokenSecret, '', 'amil dashboard session cookie', 32));
    keys.set(config, key);
  }
  return key;
}

const mac = (config: Config, value: string): string =>
  createHmac('sha256', keyOf(config)).update(value).digest('base64url');

/** `value.mac`: what the cookie holds. */
export function signValue(config: Config, value: string): string {
  return `${value}.${mac(config, value)}`;
}

/** The value of a signed cookie, or undefined when the signature does not match. */
export function unsignValue(config: Config, signed: string | undefined): string | undefined {
  if (!signed || signed.length > 200) return undefined;
  const dot = signed.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const value = signed.slice(0, dot);
  return constantTimeEqual(signed.slice(dot + 1), mac(config, value)) ? value : undefined;
}

export const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');
export const randomToken = (): string => randomBytes(32).toString('base64url');

/**
 * Sets a dashboard cookie; `maxAgeSeconds` 0 removes it. Secure when {reports_url} is public over https
 * (a TLS proxy may forward to 127.0.0.1 without TRUST_PROXY) or the request came to a non-loopback host.
 */
export function setCookie(
  deps: Deps,
  ctx: Context,
  name: string,
  value: string,
  maxAgeSeconds: number,
): void {
  const secure = deps.config.publicUrls.reports.startsWith('https:') || !isLoopback(ctx.hostname);
  ctx.append(
    'Set-Cookie',
    `${name}=${value}; Path=${COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
  );
}

/**
 * Starts a session for the user (waiting for the TOTP code when `pendingTotp`) and sets its cookie, if
 * what the sign-in checked (`grant`) still holds: false when a password reset or a disable, from any
 * process, came between the check and now (no session then). The request's previous session, if any,
 * ends: a new id at each sign-in step, so no id chosen before sign-in (session fixation) survives it.
 */
export async function startSession(
  deps: Deps,
  ctx: Context,
  signedIn: { userId: number; needsCode: boolean; grant: SessionGrant },
): Promise<boolean> {
  const now = deps.clock.now();
  const previous = unsignValue(deps.config, ctx.cookies.get(SESSION_COOKIE));
  // The half-open session a code completes ends with the new one's start (createSession), not before it.
  if (previous !== undefined && !('completing' in signedIn.grant))
    await deps.store.dashboardUsers.revokeSession(sha256(previous), now);
  const id = randomToken();
  const maxSeconds = deps.config.dashboard.maxHours * 3600;
  const started = await deps.store.dashboardUsers.createSession(
    {
      idSha256: sha256(id),
      userId: signedIn.userId,
      csrf: randomToken(),
      pendingTotp: signedIn.needsCode,
      createdAt: now.toISOString(),
      lastSeenAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + maxSeconds * 1000).toISOString(),
    },
    signedIn.grant,
  );
  if (started) setCookie(deps, ctx, SESSION_COOKIE, signValue(deps.config, id), maxSeconds);
  return started;
}

/**
 * The live session of the request's cookie (pending TOTP or not), marked seen; undefined when there is
 * none, or it was revoked, or it expired (idle or absolute).
 */
export async function currentSession(deps: Deps, ctx: Context): Promise<DashboardSession | undefined> {
  const id = unsignValue(deps.config, ctx.cookies.get(SESSION_COOKIE));
  if (id === undefined) return undefined;
  const session = await deps.store.dashboardUsers.session(sha256(id));
  if (!session || session.revokedAt !== null) return undefined;
  const now = deps.clock.now().getTime();
  const idleMs = deps.config.dashboard.idleMinutes * 60_000;
  const seen = Date.parse(session.lastSeenAt);
  if (now >= Date.parse(session.expiresAt) || now - seen >= idleMs) return undefined;
  if (now - seen >= TOUCH_EVERY_MS)
    await deps.store.dashboardUsers.touchSession(session.idSha256, new Date(now));
  return session;
}

/** Ends the request's session (if any) in the store and removes its cookie. */
export async function endSession(deps: Deps, ctx: Context, session?: DashboardSession): Promise<void> {
  if (session) await deps.store.dashboardUsers.revokeSession(session.idSha256, deps.clock.now());
  setCookie(deps, ctx, SESSION_COOKIE, '', 0);
}
