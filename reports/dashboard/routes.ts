/**
 * The merchant dashboard on {reports_url} (issue 18, spec 5.1): sign-in and sign-out, the agency pages under
 * /dashboard/a/:agency/ behind the session guards, and the dashboard's own stylesheet and script.
 */
import { readFileSync } from 'node:fs';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Deps } from '../../core/deps.ts';
import { DomainError } from '../../core/errors.ts';
import { readForm } from '../../core/http/form.ts';
import { html } from '../../core/html.ts';
import { registerApiAccess } from './api-access.ts';
import { registerAuditPage } from './audit-page.ts';
import { csrfOk, dashboardHeaders, dashboardSession, sendHtml, sendRefusal } from './guards.ts';
import { plainPage } from './layout.ts';
import { codePage, loginPage } from './login-pages.ts';
import { registerDashboardPages } from './pages/index.ts';
import {
  LOGIN_COOKIE,
  currentSession,
  endSession,
  randomToken,
  setCookie,
  signValue,
  startSession,
  unsignValue,
} from './session.ts';
import { signInWithCode, signInWithPassword } from './sign-in.ts';

const ASSETS = new Map(
  (
    [
      ['dashboard.css', 'text/css; charset=utf-8'],
      ['copy.js', 'text/javascript; charset=utf-8'],
    ] as const
  ).map(([name, type]) => [
    name as string,
    { type, body: readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8') },
  ]),
);

/** Only our own dashboard paths are followed after sign-in: no open redirect. */
function safeNext(next: string | undefined): string {
  return next && /^\/dashboard\/(?![/\\])[^\\\s]*$/.test(next) ? next : '/dashboard/';
}

const field = (form: [string, string][], name: string): string =>
  form.find(([key]) => key === name)?.[1] ?? '';

function seeOther(ctx: Context, location: string): void {
  ctx.status = 303;
  ctx.redirect(location);
}

/** The dashboard's router (prefix /dashboard); the read pages come from pages/index.ts. */
export function dashboardRoutes(deps: Deps): Router {
  const router = new Router({ prefix: '/dashboard' });
  router.use(dashboardHeaders);

  router.get('/assets/:name', (ctx) => {
    const asset = ASSETS.get(ctx.params.name ?? '');
    if (!asset) throw new DomainError('not-found');
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = asset.body;
  });

  /** The sign-in form's double-submit token: the one in its cookie, or a new one. */
  const loginToken = (ctx: Context): string => {
    const existing = unsignValue(deps.config, ctx.cookies.get(LOGIN_COOKIE));
    if (existing) return existing;
    const token = randomToken();
    setCookie(deps, ctx, LOGIN_COOKIE, signValue(deps.config, token), 3600);
    return token;
  };

  router.get('/login', async (ctx) => {
    const session = await currentSession(deps, ctx);
    if (session && !session.pendingTotp) return seeOther(ctx, '/dashboard/');
    const next = safeNext(typeof ctx.query.next === 'string' ? ctx.query.next : undefined);
    const notice = ctx.query['signed-out'] === '1' ? 'You are signed out.' : undefined;
    sendHtml(ctx, 200, loginPage({ csrf: loginToken(ctx), next, ...(notice && { notice }) }));
  });

  router.post('/login', async (ctx) => {
    const form = await readForm(ctx);
    const email = field(form, 'email');
    const next = safeNext(field(form, 'next'));
    const expected = unsignValue(deps.config, ctx.cookies.get(LOGIN_COOKIE));
    const again = (status: number, error: string) =>
      sendHtml(ctx, status, loginPage({ csrf: loginToken(ctx), next, email, error }));
    if (!expected || !(await csrfOk(deps, ctx, expected)))
      return again(403, 'The sign-in form expired. Please sign in again.');
    const result = await signInWithPassword(deps, {
      email,
      password: field(form, 'password'),
      client: ctx.ip,
    });
    if (result.outcome === 'limited') {
      ctx.set('Retry-After', String(result.retryAfterSeconds));
      return again(429, `Too many failed sign-ins. Try again in ${minutes(result.retryAfterSeconds)}.`);
    }
    // Refused too when the password was reset (or the user disabled) while it was being checked.
    if (result.outcome === 'refused' || !(await startSession(deps, ctx, result)))
      return again(401, 'The e-mail address or password is wrong.');
    setCookie(deps, ctx, LOGIN_COOKIE, '', 0);
    seeOther(ctx, result.needsCode ? '/dashboard/login/code' : next);
  });

  router.get('/login/code', async (ctx) => {
    const session = await currentSession(deps, ctx);
    if (!session?.pendingTotp) return seeOther(ctx, '/dashboard/login');
    sendHtml(ctx, 200, codePage({ csrf: session.csrf }));
  });

  router.post('/login/code', async (ctx) => {
    const session = await currentSession(deps, ctx);
    if (!session?.pendingTotp) return seeOther(ctx, '/dashboard/login');
    if (!(await csrfOk(deps, ctx, session.csrf)))
      return sendRefusal(ctx, 403, 'Form expired', 'Reload the page and try again.');
    const code = field(await readForm(ctx), 'code');
    const result = await signInWithCode(deps, {
      userId: session.userId,
      pending: session.idSha256,
      code,
      client: ctx.ip,
    });
    if (result.outcome === 'limited') {
      ctx.set('Retry-After', String(result.retryAfterSeconds));
      return sendHtml(
        ctx,
        429,
        codePage({
          csrf: session.csrf,
          error: `Too many wrong codes. Try again in ${minutes(result.retryAfterSeconds)}.`,
        }),
      );
    }
    if (result.outcome === 'refused')
      return sendHtml(
        ctx,
        401,
        codePage({ csrf: session.csrf, error: 'That code is not right. Try the next one.' }),
      );
    // A new session id once both factors passed: the half-signed-in one is never promoted, and ends here.
    // Ended meanwhile (a password reset, a disable, the same code posted twice): sign in again.
    if (!(await startSession(deps, ctx, result))) return seeOther(ctx, '/dashboard/login');
    seeOther(ctx, '/dashboard/');
  });

  router.post('/logout', async (ctx) => {
    const session = await currentSession(deps, ctx);
    if (session && !(await csrfOk(deps, ctx, session.csrf)))
      return sendRefusal(ctx, 403, 'Form expired', 'Reload the page and sign out again.');
    await endSession(deps, ctx, session);
    seeOther(ctx, '/dashboard/login?signed-out=1');
  });

  router.get('/', async (ctx) => {
    const session = await currentSession(deps, ctx);
    if (session?.pendingTotp) return seeOther(ctx, '/dashboard/login/code');
    const user = session && (await deps.store.dashboardUsers.get(session.userId));
    if (!user || user.disabledAt !== null) return seeOther(ctx, '/dashboard/login');
    const first = user.memberships[0];
    if (first) return seeOther(ctx, `/dashboard/a/${encodeURIComponent(first.agency)}/`);
    sendHtml(
      ctx,
      200,
      plainPage(
        'No agency yet',
        html`<p>
          Your account belongs to no agency yet. Ask your agency's admin or amil operations to add you.
        </p>`.value,
      ),
    );
  });

  // Everything under /dashboard/a/:agency/ runs behind the session, membership and CSRF guards.
  const agency = new Router({ prefix: '/a/:agency' });
  agency.use(dashboardSession(deps));
  registerDashboardPages(agency, deps);
  registerApiAccess(agency, deps);
  registerAuditPage(agency, deps);
  router.use(agency.routes(), agency.allowedMethods());
  return router;
}

const minutes = (seconds: number): string => {
  const m = Math.ceil(seconds / 60);
  return m === 1 ? '1 minute' : `${m} minutes`;
};

/** Mounts the dashboard on the {reports_url} host's router. */
export function mountDashboard(router: Router, deps: Deps): void {
  const dashboard = dashboardRoutes(deps);
  router.use(dashboard.routes(), dashboard.allowedMethods());
}
