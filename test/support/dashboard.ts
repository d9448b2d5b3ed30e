/**
 * The merchant dashboard for tests: dashboard users made as ops makes them, and a signed-in client over
 * real HTTP (the session cookie and CSRF token a browser would hold).
 */
import assert from 'node:assert/strict';
import { addDashboardUser } from '../../core/dashboard-accounts.ts';
import type { DashboardRole } from '../../core/store/index.ts';
import type { TestApp } from '../helpers.ts';

/** The demo users seeded in embedded mode (fixtures/demo/seed.json): admins of LZS and of PPZ. */
export const DEMO_LZS_ADMIN = { email: 'admin@lzs.example.my', password: 'demo-dashboard-lzs' };
export const DEMO_PPZ_ADMIN = { email: 'admin@ppz.example.my', password: 'demo-dashboard-ppz' };

let sequence = 0;

/** A new dashboard user with the given roles (e.g. `{ LZS: 'viewer' }`); its password is returned. */
export async function dashboardUser(
  app: TestApp,
  agencies: Record<string, DashboardRole>,
  options: { email?: string; password?: string } = {},
): Promise<{ id: number; email: string; password: string }> {
  sequence += 1;
  const { user, password } = await addDashboardUser(app.deps.store, {
    email: options.email ?? `user${sequence}-${process.pid}@agency.example.my`,
    name: `Test user ${sequence}`,
    password: options.password ?? `test-password-${sequence}-long`,
    memberships: Object.entries(agencies).map(([agency, role]) => ({ agency, role })),
    now: new Date(),
  });
  return { id: user.id, email: user.email, password };
}

export interface DashboardClient {
  /** The `Cookie` header of the session. */
  cookie: string;
  /** The session's CSRF token (what csrfField puts in forms). */
  csrf: string;
  /** GET a dashboard path (redirects not followed). */
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  /** POST a form to a dashboard path, with the session's CSRF token unless `_csrf` is given. */
  post(path: string, fields?: Record<string, string>, headers?: Record<string, string>): Promise<Response>;
}

/** The first `Set-Cookie` value named `name` of a response, or undefined. */
export function cookieOf(response: Response, name: string): string | undefined {
  const line = response.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  return line?.slice(name.length + 1).split(';')[0];
}

/** The sign-in form as a browser holds it: its token and the cookie that token is bound to. */
export interface LoginForm {
  csrf: string;
  cookie: string;
}

/** Opens the sign-in page. */
export async function loginForm(app: TestApp, headers: Record<string, string> = {}): Promise<LoginForm> {
  const form = await fetch(`${app.url}/dashboard/login`, { headers });
  const body = await form.text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
  const login = cookieOf(form, 'amil_login');
  assert.ok(csrf && login, 'the sign-in page gives a form token and its cookie');
  return { csrf, cookie: `amil_login=${login}` };
}

/** Posts an opened sign-in form; the response of the POST. */
export function postLoginForm(
  app: TestApp,
  form: LoginForm,
  email: string,
  password: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${app.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie, ...headers },
    body: new URLSearchParams({ _csrf: form.csrf, email, password, next: '/dashboard/' }),
  });
}

/** Opens the sign-in page and posts the form as a browser does; the response of the POST. */
export async function postLogin(
  app: TestApp,
  email: string,
  password: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return postLoginForm(app, await loginForm(app, headers), email, password, headers);
}

/** A client over an existing session cookie; its CSRF token is read from a page of `agency`. */
export async function dashboardClient(
  app: TestApp,
  sessionCookie: string,
  agency: string,
): Promise<DashboardClient> {
  const cookie = `amil_session=${sessionCookie}`;
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${app.url}${path}`, { redirect: 'manual', headers: { cookie, ...headers } });
  const page = await get(`/dashboard/a/${agency}/audit`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  assert.ok(csrf, `a page of ${agency} carries the CSRF token (status ${page.status})`);
  return {
    cookie,
    csrf,
    get,
    post: (path, fields = {}, headers = {}) =>
      fetch(`${app.url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ _csrf: csrf, ...fields }),
      }),
  };
}

/** Signs in with e-mail and password (no TOTP) and returns the signed-in client, on its first agency. */
export async function signIn(
  app: TestApp,
  user: { email: string; password: string },
  agency?: string,
): Promise<DashboardClient> {
  const response = await postLogin(app, user.email, user.password);
  assert.equal(response.status, 303, 'signing in redirects');
  const session = cookieOf(response, 'amil_session');
  assert.ok(session, 'signing in sets the session cookie');
  const first =
    agency ?? (await app.deps.store.dashboardUsers.byEmail(user.email))?.memberships[0]?.agency ?? '';
  return dashboardClient(app, session, first);
}
