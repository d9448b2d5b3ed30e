/**
 * The dashboard's guards: who is signed in (the session middleware sets `ctx.state.dashboard`), whether
 * they belong to the page's agency (404 if not, as for an unknown agency), CSRF on every POST, and
 * `requireAdmin` for what viewers may not do.
 */
import type { Context, Middleware, Next } from 'koa';
import type { Deps } from '../../core/deps.ts';
import { readForm } from '../../core/http/form.ts';
import { html } from '../../core/html.ts';
import { constantTimeEqual } from '../../core/constant-time.ts';
import { plainPage } from './layout.ts';
import { currentSession } from './session.ts';
import { dashboardStateIfAny, type DashboardState } from './state.ts';

/** Headers of every dashboard response: our own styles and scripts only, never framed, cached or sniffed. */
export async function dashboardHeaders(ctx: Context, next: Next): Promise<void> {
  setDashboardHeaders(ctx);
  await next();
}

/** The headers of dashboardHeaders, for a response made outside the dashboard's router (its refusals). */
export function setDashboardHeaders(ctx: Context): void {
  ctx.set(
    'Content-Security-Policy',
    [
      "default-src 'none'",
      "style-src 'self'",
      "script-src 'self'",
      "img-src 'self' data:",
      "connect-src 'self'",
      "form-action 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join('; '),
  );
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  // same-origin, not no-referrer: with no-referrer, Chrome sends `Origin: null` on our own form posts.
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('Cache-Control', 'no-store');
}

/** Sends a dashboard page with its status (an HTML string from dashboardPage or plainPage). */
export function sendHtml(ctx: Context, status: number, page: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page;
}

/** A refusal as a page with a way back: 403 (not allowed), 404 (no such agency or page for this user). */
export function sendRefusal(ctx: Context, status: 403 | 404, title: string, message: string): void {
  sendHtml(
    ctx,
    status,
    plainPage(
      title,
      html`<p>${message}</p>
        <p><a href="/dashboard/">Back to the dashboard</a></p>`.value,
    ),
  );
}

/** Where an anonymous browser is sent: the sign-in page, coming back here afterwards. */
function toLogin(ctx: Context): void {
  const next = ctx.method === 'GET' ? `?next=${encodeURIComponent(ctx.originalUrl)}` : '';
  ctx.status = 303;
  ctx.redirect(`/dashboard/login${next}`);
}

/** The token a POST carries: the `X-CSRF-Token` header, or the form's `_csrf` field. */
async function csrfOf(ctx: Context): Promise<string | undefined> {
  const header = ctx.get('X-CSRF-Token');
  if (header) return header;
  if (!ctx.is('application/x-www-form-urlencoded')) return undefined;
  return (await readForm(ctx)).find(([key]) => key === '_csrf')?.[1];
}

/**
 * True when a state-changing request carries the session's token and, if it names its origin, comes from
 * here: the public origin of {reports_url} (PUBLIC_REPORTS_URL, what a browser behind a TLS proxy sends),
 * or the scheme and host the request came to (Koa 3's ctx.origin is the Origin header itself).
 */
export async function csrfOk(deps: Deps, ctx: Context, expected: string): Promise<boolean> {
  const origin = ctx.get('Origin');
  if (origin && origin !== deps.config.publicUrls.reports && origin !== `${ctx.protocol}://${ctx.host}`)
    return false;
  const token = await csrfOf(ctx);
  return token !== undefined && constantTimeEqual(token, expected);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The signed-in user of the request, as a member of `:agency`: sets `ctx.state.dashboard`. Anonymous (or
 * expired, revoked, disabled) -> the sign-in page; not a member -> 404; a POST without the session's CSRF
 * token -> 403, before any route runs.
 */
export function dashboardSession(deps: Deps): Middleware {
  return async (ctx, next) => {
    const session = await currentSession(deps, ctx);
    if (!session) return toLogin(ctx);
    if (session.pendingTotp) {
      ctx.status = 303;
      return ctx.redirect('/dashboard/login/code');
    }
    const user = await deps.store.dashboardUsers.get(session.userId);
    if (!user || user.disabledAt !== null) return toLogin(ctx);
    const agency = String((ctx.params as Record<string, string | undefined>).agency ?? '');
    const membership = user.memberships.find((m) => m.agency === agency);
    if (!membership) return sendRefusal(ctx, 404, 'Not found', 'There is no such page for you here.');
    if (!SAFE_METHODS.has(ctx.method) && !(await csrfOk(deps, ctx, session.csrf))) {
      return sendRefusal(
        ctx,
        403,
        'Form expired',
        'This form was not sent from your current session. Reload the page and try again.',
      );
    }
    const state: DashboardState = {
      user: { id: user.id, email: user.email, name: user.name },
      agency,
      role: membership.role,
      agencies: user.memberships.map((m) => ({ code: m.agency, name: m.agencyName, role: m.role })),
      csrf: session.csrf,
    };
    ctx.state.dashboard = state;
    await next();
  };
}

/** Admins only: a viewer gets a 403 page (it names the role needed, so they know whom to ask). */
export const requireAdmin: Middleware = async (ctx, next) => {
  const state = dashboardStateIfAny(ctx);
  if (state?.role !== 'admin') {
    return sendRefusal(
      ctx,
      403,
      'Admins only',
      'This needs the admin role in this agency. Ask one of its admins if you need it.',
    );
  }
  await next();
};
