/** The merchant dashboard's sign-in, sessions, CSRF, roles and API access page, over real HTTP and SQLite. */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixedClock } from '../../core/clock.ts';
import { assertNoDemoSecrets } from '../../core/bootstrap.ts';
import { hashPassword } from '../../core/passwords.ts';
import { newTotpSecret, totpCode } from '../../core/totp.ts';
import { startApp, type TestApp } from '../helpers.ts';
import {
  DEMO_LZS_ADMIN,
  cookieOf,
  dashboardClient,
  dashboardUser,
  loginForm,
  postLogin,
  postLoginForm,
  signIn,
} from '../support/dashboard.ts';

/** A request sent with the given Host header (node:http, which lets a test set it): Set-Cookie and body. */
function requestWithHost(
  url: string,
  host: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ cookies: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'GET', headers: { ...options.headers, host } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ cookies: res.headers['set-cookie'] ?? [], body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The stored id of a client's session: the SHA-256 of the id in its cookie. */
const sessionIdOf = (client: { cookie: string }): string =>
  createHash('sha256')
    .update(client.cookie.replace(/^amil_session=/, '').split('.')[0] ?? '')
    .digest('hex');

const csrfIn = (body: string) => /name="_csrf" value="([^"]+)"/.exec(body)?.[1];

/** The token shown once on the API access page after minting. */
function shownToken(body: string): string | undefined {
  return /<textarea id="new-token"[^>]*>([^<]+)<\/textarea>/.exec(body)?.[1];
}

test('the demo admin signs in and lands on its agency; a wrong password gets 401 and no session', async (t) => {
  const app = await startApp(t);
  const wrong = await postLogin(app, DEMO_LZS_ADMIN.email, 'not-the-password');
  assert.equal(wrong.status, 401);
  assert.match(await wrong.text(), /e-mail address or password is wrong/);
  assert.equal(cookieOf(wrong, 'amil_session'), undefined);

  const right = await postLogin(app, DEMO_LZS_ADMIN.email.toUpperCase(), DEMO_LZS_ADMIN.password);
  assert.equal(right.status, 303);
  assert.equal(right.headers.get('location'), '/dashboard/');
  const client = await dashboardClient(app, cookieOf(right, 'amil_session') ?? '', 'LZS');
  const home = await client.get('/dashboard/');
  assert.equal(home.status, 303);
  assert.equal(home.headers.get('location'), '/dashboard/a/LZS/');
});

test('the session cookie is HttpOnly, SameSite=Lax, scoped to /dashboard, and Secure unless the host is loopback', async (t) => {
  const app = await startApp(t);
  const loopback = await postLogin(app, DEMO_LZS_ADMIN.email, DEMO_LZS_ADMIN.password);
  const local = loopback.headers.getSetCookie().find((c) => c.startsWith('amil_session=')) ?? '';
  assert.match(local, /; Path=\/dashboard;/);
  assert.match(local, /; HttpOnly/);
  assert.match(local, /; SameSite=Lax/);
  assert.match(local, /; Max-Age=43200/, 'the absolute lifetime (12 h) bounds the cookie too');
  assert.doesNotMatch(local, /Secure/);

  // fetch() always sends the address it connects to as Host; a raw request names the public host.
  const host = 'dashboard.amil.example.my';
  const form = await requestWithHost(`${app.url}/dashboard/login`, host);
  const login = form.cookies.find((c) => c.startsWith('amil_login='))?.split(';')[0] ?? '';
  const remote = await requestWithHost(`${app.url}/dashboard/login`, host, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: login },
    body: new URLSearchParams({
      _csrf: csrfIn(form.body) ?? '',
      email: DEMO_LZS_ADMIN.email,
      password: DEMO_LZS_ADMIN.password,
    }).toString(),
  });
  const published = remote.cookies.find((c) => c.startsWith('amil_session=')) ?? '';
  assert.match(published, /; HttpOnly; SameSite=Lax; Secure$/);
});

test('behind a TLS proxy (PUBLIC_REPORTS_URL https), the cookie is Secure and forms posted from that origin are accepted', async (t) => {
  // The proxy forwards to 127.0.0.1 over plain HTTP, without TRUST_PROXY: the request alone looks local.
  const app = await startApp(t, { PUBLIC_REPORTS_URL: 'https://reports.amil.example.my' });
  const response = await postLogin(app, DEMO_LZS_ADMIN.email, DEMO_LZS_ADMIN.password, {
    origin: 'https://reports.amil.example.my',
  });
  assert.equal(response.status, 303);
  const cookie = response.headers.getSetCookie().find((c) => c.startsWith('amil_session=')) ?? '';
  assert.match(cookie, /; Secure$/);
  const client = await dashboardClient(app, cookieOf(response, 'amil_session') ?? '', 'LZS');
  const saved = await client.post(
    '/dashboard/a/LZS/api-access/settings',
    { callback_hosts: 'shop.lzs.example.my', recipients: 'kewangan@lzs.example.my' },
    { origin: 'https://reports.amil.example.my' },
  );
  assert.equal(saved.status, 303);
  const forged = await client.post(
    '/dashboard/a/LZS/api-access/settings',
    { callback_hosts: 'evil.example', recipients: '' },
    { origin: 'https://reports.amil.example.my.evil.example' },
  );
  assert.equal(forged.status, 403);
  assert.deepEqual((await app.deps.store.agencies.get('LZS'))?.settings.callbackHosts, [
    'shop.lzs.example.my',
  ]);
});

test('a tampered session cookie opens nothing', async (t) => {
  const app = await startApp(t);
  const response = await postLogin(app, DEMO_LZS_ADMIN.email, DEMO_LZS_ADMIN.password);
  const cookie = cookieOf(response, 'amil_session') ?? '';
  const [id = '', mac = ''] = cookie.split('.');
  const forged = `${id.slice(0, -1)}${id.endsWith('A') ? 'B' : 'A'}.${mac}`;
  const page = await fetch(`${app.url}/dashboard/a/LZS/audit`, {
    redirect: 'manual',
    headers: { cookie: `amil_session=${forged}` },
  });
  assert.equal(page.status, 303);
  assert.match(page.headers.get('location') ?? '', /^\/dashboard\/login\?next=/);
});

test('failed sign-ins are limited per e-mail address, then the right password waits too, with Retry-After', async (t) => {
  const app = await startApp(t, {
    DASHBOARD_LOGIN_MAX_FAILURES: '3',
    DASHBOARD_LOGIN_MAX_FAILURES_PER_CLIENT: '100',
  });
  for (let i = 0; i < 3; i++)
    assert.equal((await postLogin(app, DEMO_LZS_ADMIN.email, `wrong-${i}`)).status, 401);
  const limited = await postLogin(app, DEMO_LZS_ADMIN.email, DEMO_LZS_ADMIN.password);
  assert.equal(limited.status, 429);
  assert.ok(Number(limited.headers.get('retry-after')) > 0);
  assert.equal(cookieOf(limited, 'amil_session'), undefined);
  // Another user is not held back by this one's failures.
  const other = await dashboardUser(app, { PPZ: 'viewer' });
  assert.equal((await postLogin(app, other.email, other.password)).status, 303);
});

test('failed sign-ins are limited per client across e-mail addresses, and a success gives its attempt back', async (t) => {
  const app = await startApp(t, {
    DASHBOARD_LOGIN_MAX_FAILURES: '100',
    DASHBOARD_LOGIN_MAX_FAILURES_PER_CLIENT: '3',
  });
  // Successes cost nothing: many sign-ins from one office stay possible.
  for (let i = 0; i < 5; i++)
    assert.equal((await postLogin(app, DEMO_LZS_ADMIN.email, DEMO_LZS_ADMIN.password)).status, 303);
  for (let i = 0; i < 3; i++)
    assert.equal((await postLogin(app, `nobody${i}@example.my`, 'whatever-password')).status, 401);
  assert.equal((await postLogin(app, DEMO_LZS_ADMIN.email, DEMO_LZS_ADMIN.password)).status, 429);
});

test('signing out revokes the session on the server: the old cookie opens nothing afterwards', async (t) => {
  const app = await startApp(t);
  const client = await signIn(app, DEMO_LZS_ADMIN);
  assert.equal((await client.get('/dashboard/a/LZS/audit')).status, 200);
  const out = await client.post('/dashboard/logout');
  assert.equal(out.status, 303);
  assert.equal(out.headers.get('location'), '/dashboard/login?signed-out=1');
  assert.match(out.headers.getSetCookie().join('\n'), /amil_session=; Path=\/dashboard; Max-Age=0/);
  // A copy of the cookie kept by someone else is as dead as the browser's.
  const replay = await client.get('/dashboard/a/LZS/audit');
  assert.equal(replay.status, 303);
  assert.match(replay.headers.get('location') ?? '', /^\/dashboard\/login/);
});

test('disabling a user or resetting the password ends their sessions; a disabled user cannot sign in', async (t) => {
  const app = await startApp(t);
  const users = app.deps.store.dashboardUsers;
  const user = await dashboardUser(app, { LZS: 'viewer' });
  const first = await signIn(app, user);
  await users.setPassword(user.id, (await users.byEmail(user.email))?.passwordHash ?? '', new Date());
  assert.equal((await first.get('/dashboard/a/LZS/audit')).status, 303, 'a password reset signs out');

  const second = await signIn(app, user);
  await users.setDisabled(user.id, true, new Date());
  assert.equal((await second.get('/dashboard/a/LZS/audit')).status, 303, 'disabling signs out');
  const refused = await postLogin(app, user.email, user.password);
  assert.equal(refused.status, 401, 'a disabled user is refused like a wrong password');
  assert.equal(cookieOf(refused, 'amil_session'), undefined);
});

test('a password reset or a disable while sign-ins are being checked leaves none of them a session', async (t) => {
  const app = await startApp(t);
  const users = app.deps.store.dashboardUsers;
  for (const change of ['reset', 'disable'] as const) {
    const user = await dashboardUser(app, { LZS: 'viewer' });
    const newHash = await hashPassword('a-new-password-chosen-by-ops');
    // Six browsers with the old password at once: scrypt runs two at a time, so most of them have read the
    // user (and its old hash) when the first answer comes back and the reset (or disable) commits, as the
    // CLI or another web process would commit it.
    const forms = await Promise.all([1, 2, 3, 4, 5, 6].map(() => loginForm(app)));
    let changed: Promise<boolean> | undefined;
    const answers = await Promise.all(
      forms.map((form) =>
        postLoginForm(app, form, user.email, user.password).then((response) => {
          changed ??=
            change === 'reset'
              ? users.setPassword(user.id, newHash, new Date())
              : users.setDisabled(user.id, true, new Date());
          return response;
        }),
      ),
    );
    assert.equal(await changed, true);
    if (change === 'disable') await users.setDisabled(user.id, false, new Date());
    const opened: number[] = [];
    for (const answer of answers) {
      const session = cookieOf(answer, 'amil_session');
      if (session === undefined) continue;
      const page = await fetch(`${app.url}/dashboard/a/LZS/audit`, {
        redirect: 'manual',
        headers: { cookie: `amil_session=${session}` },
      });
      if (page.status === 200) opened.push(answers.indexOf(answer));
    }
    assert.deepEqual(opened, [], `after the ${change}, sign-ins ${opened.join(', ')} still open pages`);
  }
});

test('a session ends after DASHBOARD_SESSION_IDLE_MINUTES unused, and after DASHBOARD_SESSION_MAX_HOURS however used', async (t) => {
  const clock = fixedClock('2026-11-20T01:00:00Z');
  const app = await startApp(t, {}, { clock });
  const client = await signIn(app, DEMO_LZS_ADMIN);
  // Used every 20 minutes: the idle limit (30) never passes, but 12 hours after sign-in it ends.
  for (let minutes = 20; minutes < 12 * 60; minutes += 20) {
    clock.set(new Date(Date.parse('2026-11-20T01:00:00Z') + minutes * 60_000));
    assert.equal((await client.get('/dashboard/a/LZS/audit')).status, 200, `at +${minutes} min`);
  }
  clock.set('2026-11-20T13:00:00Z');
  assert.equal((await client.get('/dashboard/a/LZS/audit')).status, 303, 'absolute expiry');

  // A day after it ended, a session is gone from the store (pruned at the next sign-in).
  const ended = await app.deps.store.dashboardUsers.session(sessionIdOf(client));
  assert.ok(ended, 'the ended session is still stored the same day');
  clock.set('2026-11-21T13:00:01Z');
  const idle = await signIn(app, DEMO_LZS_ADMIN);
  assert.equal(await app.deps.store.dashboardUsers.session(sessionIdOf(client)), undefined);
  clock.set('2026-11-21T13:29:00Z');
  assert.equal((await idle.get('/dashboard/a/LZS/audit')).status, 200);
  clock.set('2026-11-21T13:59:30Z');
  assert.equal((await idle.get('/dashboard/a/LZS/audit')).status, 303, 'idle expiry');
});

test('a POST without the session CSRF token, or with a wrong one or from another origin, is refused 403 and changes nothing', async (t) => {
  const app = await startApp(t);
  const client = await signIn(app, DEMO_LZS_ADMIN);
  const keyBefore = await app.deps.store.agencies.apiKeyOf('LZS');
  const send = (body: URLSearchParams, headers: Record<string, string> = {}) =>
    fetch(`${app.url}/dashboard/a/LZS/api-access/api-key`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: client.cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body,
    });
  assert.equal((await send(new URLSearchParams({ confirm: 'yes' }))).status, 403);
  assert.equal((await send(new URLSearchParams({ confirm: 'yes', _csrf: 'forged' }))).status, 403);
  assert.equal(
    (
      await send(new URLSearchParams({ confirm: 'yes', _csrf: client.csrf }), {
        origin: 'https://evil.example',
      })
    ).status,
    403,
  );
  assert.equal(await app.deps.store.agencies.apiKeyOf('LZS'), keyBefore);
  assert.equal((await client.post('/dashboard/logout', { _csrf: 'forged' })).status, 403);
  assert.equal(
    (await client.get('/dashboard/a/LZS/audit')).status,
    200,
    'a forged sign-out signs nobody out',
  );

  // The sign-in form carries a token bound to its cookie: a cross-site login is refused.
  const login = await fetch(`${app.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: DEMO_LZS_ADMIN.email, password: DEMO_LZS_ADMIN.password }),
  });
  assert.equal(login.status, 403);
  assert.equal(cookieOf(login, 'amil_session'), undefined);
});

test('a viewer gets 403 on every admin page and form, and nothing changes', async (t) => {
  const app = await startApp(t);
  const viewer = await signIn(app, await dashboardUser(app, { LZS: 'viewer' }));
  const token = await app.deps.store.dashboardUsers.reportTokensOf('LZS');
  const before = {
    key: await app.deps.store.agencies.apiKeyOf('LZS'),
    settings: (await app.deps.store.agencies.get('LZS'))?.settings,
    tokens: token.length,
  };
  const page = await viewer.get('/dashboard/a/LZS/audit');
  assert.equal(page.status, 200, 'a viewer reads the agency pages');
  assert.doesNotMatch(await page.text(), /api-access/, 'and is not offered the admin menu item');
  const refusals = [
    await viewer.get('/dashboard/a/LZS/api-access'),
    await viewer.post('/dashboard/a/LZS/api-access/tokens', { agencies: 'LZS', ttl: '90d' }),
    await viewer.post('/dashboard/a/LZS/api-access/api-key', { confirm: 'yes' }),
    await viewer.post('/dashboard/a/LZS/api-access/settings', {
      callback_hosts: 'evil.example',
      recipients: '',
    }),
    await viewer.post('/dashboard/a/LZS/api-access/tokens/any-id/revoke'),
  ];
  for (const response of refusals) {
    assert.equal(response.status, 403, response.url);
    assert.match(await response.text(), /admin role/);
  }
  assert.equal(await app.deps.store.agencies.apiKeyOf('LZS'), before.key);
  assert.deepEqual((await app.deps.store.agencies.get('LZS'))?.settings, before.settings);
  assert.equal((await app.deps.store.dashboardUsers.reportTokensOf('LZS')).length, before.tokens);
});

test("a member of another agency gets 404 for this agency's pages and tokens, as for an unknown agency", async (t) => {
  const app = await startApp(t);
  const ppz = await signIn(app, await dashboardUser(app, { PPZ: 'admin' }));
  const lzs = await signIn(app, DEMO_LZS_ADMIN);
  const minted = await lzs.post('/dashboard/a/LZS/api-access/tokens', { agencies: 'LZS', ttl: '7d' });
  const jti = /<td class="mono">([0-9a-f-]{36})<\/td>/.exec(await minted.text())?.[1] ?? '';
  assert.ok(jti);
  for (const path of [
    '/dashboard/a/LZS/',
    '/dashboard/a/LZS/audit',
    '/dashboard/a/LZS/api-access',
    '/dashboard/a/NOPE/audit',
  ])
    assert.equal((await ppz.get(path)).status, 404, path);
  assert.equal(
    (await ppz.post('/dashboard/a/LZS/api-access/tokens', { agencies: 'LZS', ttl: '7d' })).status,
    404,
  );
  // In its own agency, another agency's token is not found either, and stays valid.
  assert.equal((await ppz.post(`/dashboard/a/PPZ/api-access/tokens/${jti}/revoke`)).status, 404);
  assert.equal((await app.deps.store.reportTokens.get(jti))?.revokedAt, null);
  // Nor may its admin mint a token covering LZS by adding it to the form.
  const widened = await ppz.post('/dashboard/a/PPZ/api-access/tokens?x=1', { agencies: 'LZS', ttl: '7d' });
  assert.equal(widened.status, 400);
  assert.match(await widened.text(), /not an admin of LZS/);
});

test('a token minted on the API access page is shown once and opens /api/report/v1/payment; revoked there, it gets 401', async (t) => {
  const app = await startApp(t);
  const admin = await signIn(app, DEMO_LZS_ADMIN);
  const page = await admin.get('/dashboard/a/LZS/api-access');
  assert.equal(page.status, 200);
  const minted = await admin.post('/dashboard/a/LZS/api-access/tokens', {
    agencies: 'LZS',
    ttl: '30d',
    label: 'finance job',
  });
  assert.equal(minted.status, 201);
  const body = await minted.text();
  const token = shownToken(body);
  assert.ok(token, 'the token is on the page');
  assert.match(body, /data-copy="new-token"/, 'with a copy button');
  assert.match(body, /<script src="\/dashboard\/assets\/copy.js"><\/script>/);

  const report = await fetch(`${app.url}/api/report/v1/payment?agency=LZS`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(report.status, 200);
  assert.equal(((await report.json()) as { status: string }).status, 'OK');

  const again = await (await admin.get('/dashboard/a/LZS/api-access')).text();
  assert.equal(shownToken(again), undefined, 'shown only once');
  assert.doesNotMatch(again, new RegExp(token.slice(-20)));
  const jti = /<td class="mono">([0-9a-f-]{36})<\/td>/.exec(again)?.[1] ?? '';
  assert.match(again, /finance job \(admin@lzs\.example\.my\)/);

  const revoked = await admin.post(`/dashboard/a/LZS/api-access/tokens/${jti}/revoke`);
  assert.equal(revoked.status, 303);
  assert.match(await (await admin.get(revoked.headers.get('location') ?? '')).text(), /The token is revoked/);
  const refused = await fetch(`${app.url}/api/report/v1/payment?agency=LZS`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(refused.status, 401);

  const audit = await (await admin.get('/dashboard/a/LZS/audit')).text();
  assert.match(audit, /token\.revoke/);
  assert.match(audit, /token\.mint/);
});

test('an admin of two agencies mints one token covering both; each agency audit log shows it', async (t) => {
  const app = await startApp(t);
  const both = await dashboardUser(app, { LZS: 'admin', PPZ: 'admin' });
  const admin = await signIn(app, both, 'LZS');
  const minted = await fetch(`${app.url}/dashboard/a/LZS/api-access/tokens`, {
    method: 'POST',
    headers: { cookie: admin.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: `_csrf=${admin.csrf}&agencies=LZS&agencies=PPZ&ttl=1d`,
  });
  const token = shownToken(await minted.text()) ?? '';
  const report = await fetch(`${app.url}/api/report/v1/payment`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(report.status, 200);
  for (const agency of ['LZS', 'PPZ'])
    assert.match(await (await admin.get(`/dashboard/a/${agency}/audit`)).text(), /token\.mint/, agency);
});

test('replacing the API key on the page shows the new key once; the old key is gone', async (t) => {
  const app = await startApp(t);
  const admin = await signIn(app, DEMO_LZS_ADMIN);
  const old = await app.deps.store.agencies.apiKeyOf('LZS');
  const unconfirmed = await admin.post('/dashboard/a/LZS/api-access/api-key', {});
  assert.equal(unconfirmed.status, 400);
  assert.equal(await app.deps.store.agencies.apiKeyOf('LZS'), old);
  const rotated = await admin.post('/dashboard/a/LZS/api-access/api-key', { confirm: 'yes' });
  assert.equal(rotated.status, 200);
  const shown = /<textarea id="new-key"[^>]*>([^<]+)<\/textarea>/.exec(await rotated.text())?.[1];
  const now = await app.deps.store.agencies.apiKeyOf('LZS');
  assert.ok(shown && shown !== old);
  assert.equal(shown, now);
  assert.doesNotMatch(await (await admin.get('/dashboard/a/LZS/api-access')).text(), new RegExp(shown));
  assert.match(await (await admin.get('/dashboard/a/LZS/audit')).text(), /api-key\.rotate/);
});

test('callback hosts and report recipients are saved from the page; a bad entry is refused and nothing is saved', async (t) => {
  const app = await startApp(t);
  const admin = await signIn(app, DEMO_LZS_ADMIN);
  const bad = await admin.post('/dashboard/a/LZS/api-access/settings', {
    callback_hosts: 'shop.lzs.example.my\nhttps://not a host/',
    recipients: 'kewangan@lzs.example.my, not-an-email',
  });
  assert.equal(bad.status, 400);
  const text = await bad.text();
  assert.match(text, /Callback hosts: not a host: https:\/\/not/);
  assert.match(text, /Report recipients: not an email: not-an-email/);
  assert.deepEqual((await app.deps.store.agencies.get('LZS'))?.settings.reportRecipients, [
    'kewangan@lzs.example.my',
  ]);

  const good = await admin.post('/dashboard/a/LZS/api-access/settings', {
    callback_hosts: 'Shop.LZS.example.my\n127.0.0.1:8080',
    recipients: 'kewangan@lzs.example.my\naudit@lzs.example.my',
  });
  assert.equal(good.status, 303);
  const settings = (await app.deps.store.agencies.get('LZS'))?.settings;
  assert.deepEqual(settings?.callbackHosts, ['shop.lzs.example.my', '127.0.0.1:8080']);
  assert.deepEqual(settings?.reportRecipients, ['kewangan@lzs.example.my', 'audit@lzs.example.my']);
  const audit = await (await admin.get('/dashboard/a/LZS/audit')).text();
  assert.match(audit, /settings\.callback-hosts/);
  assert.match(audit, /settings\.report-recipients/);
});

test('the audit log is read by every member of the agency, viewers included, and by nobody else', async (t) => {
  const app = await startApp(t);
  const admin = await signIn(app, DEMO_LZS_ADMIN);
  await admin.post('/dashboard/a/LZS/api-access/api-key', { confirm: 'yes' });
  const viewer = await signIn(app, await dashboardUser(app, { LZS: 'viewer' }));
  const seen = await (await viewer.get('/dashboard/a/LZS/audit')).text();
  assert.match(seen, /admin@lzs\.example\.my/);
  assert.match(seen, /api-key\.rotate/);
  const ppz = await signIn(app, await dashboardUser(app, { PPZ: 'viewer' }));
  assert.doesNotMatch(await (await ppz.get('/dashboard/a/PPZ/audit')).text(), /api-key\.rotate/);
});

async function withTotp(app: TestApp) {
  const user = await dashboardUser(app, { LZS: 'admin' });
  const { secret } = newTotpSecret(user.email);
  await app.deps.store.dashboardUsers.setTotp(user.id, secret);
  return { ...user, secret };
}

test('with TOTP on, the password alone opens no page; the right code does, once', async (t) => {
  const clock = fixedClock('2026-11-20T01:00:00Z');
  const app = await startApp(t, {}, { clock });
  const user = await withTotp(app);
  const password = await postLogin(app, user.email, user.password);
  assert.equal(password.status, 303);
  assert.equal(password.headers.get('location'), '/dashboard/login/code');
  const half = `amil_session=${cookieOf(password, 'amil_session')}`;
  const blocked = await fetch(`${app.url}/dashboard/a/LZS/audit`, {
    redirect: 'manual',
    headers: { cookie: half },
  });
  assert.equal(blocked.status, 303);
  assert.equal(blocked.headers.get('location'), '/dashboard/login/code');

  const form = await fetch(`${app.url}/dashboard/login/code`, { headers: { cookie: half } });
  const csrf = csrfIn(await form.text()) ?? '';
  const sendCode = (code: string, cookie = half) =>
    fetch(`${app.url}/dashboard/login/code`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, code }),
    });
  const code = totpCode(user.secret, clock.now());
  const wrong = await sendCode(code === '000000' ? '111111' : '000000');
  assert.equal(wrong.status, 401);
  const right = await sendCode(code);
  assert.equal(right.status, 303);
  const full = cookieOf(right, 'amil_session') ?? '';
  assert.notEqual(`amil_session=${full}`, half, 'a new session id once both factors passed');
  const client = await dashboardClient(app, full, 'LZS');
  assert.equal((await client.get('/dashboard/a/LZS/api-access')).status, 200);

  // The same code a second time (a shoulder-surfer's replay) is refused, even with the password.
  const again = await postLogin(app, user.email, user.password);
  const half2 = `amil_session=${cookieOf(again, 'amil_session')}`;
  const csrf2 = csrfIn(
    await (await fetch(`${app.url}/dashboard/login/code`, { headers: { cookie: half2 } })).text(),
  );
  const replay = await fetch(`${app.url}/dashboard/login/code`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: half2, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf2 ?? '', code }),
  });
  assert.equal(replay.status, 401);
});

test('wrong TOTP codes count against the same sign-in limits', async (t) => {
  const clock = fixedClock('2026-11-20T01:00:00Z');
  const app = await startApp(
    t,
    { DASHBOARD_LOGIN_MAX_FAILURES: '2', DASHBOARD_LOGIN_MAX_FAILURES_PER_CLIENT: '100' },
    { clock },
  );
  const user = await withTotp(app);
  const password = await postLogin(app, user.email, user.password);
  const cookie = `amil_session=${cookieOf(password, 'amil_session')}`;
  const csrf =
    csrfIn(await (await fetch(`${app.url}/dashboard/login/code`, { headers: { cookie } })).text()) ?? '';
  const send = (code: string) =>
    fetch(`${app.url}/dashboard/login/code`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, code }),
    });
  const right = totpCode(user.secret, clock.now());
  const wrong = right === '000000' ? '111111' : '000000';
  assert.equal((await send(wrong)).status, 401);
  assert.equal((await send(wrong)).status, 401);
  assert.equal((await send(right)).status, 429);
});

test('after sign-in only a dashboard path is followed: no open redirect', async (t) => {
  const app = await startApp(t);
  for (const next of [
    'https://evil.example/',
    '//evil.example/',
    '/dashboard//evil.example',
    '/\\evil.example',
  ]) {
    const form = await fetch(`${app.url}/dashboard/login?next=${encodeURIComponent(next)}`);
    const html = await form.text();
    const response = await fetch(`${app.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: `amil_login=${cookieOf(form, 'amil_login')}`,
      },
      body: new URLSearchParams({
        _csrf: csrfIn(html) ?? '',
        email: DEMO_LZS_ADMIN.email,
        password: DEMO_LZS_ADMIN.password,
        next,
      }),
    });
    assert.equal(response.headers.get('location'), '/dashboard/', next);
  }
});

test('an anonymous visit to a dashboard page is sent to sign in and back; the pages are never cached or framed', async (t) => {
  const app = await startApp(t);
  const anonymous = await fetch(`${app.url}/dashboard/a/LZS/audit?before=9`, { redirect: 'manual' });
  assert.equal(anonymous.status, 303);
  assert.equal(
    anonymous.headers.get('location'),
    '/dashboard/login?next=%2Fdashboard%2Fa%2FLZS%2Faudit%3Fbefore%3D9',
  );
  const login = await fetch(`${app.url}/dashboard/login?next=%2Fdashboard%2Fa%2FLZS%2Faudit`);
  assert.equal(login.headers.get('cache-control'), 'no-store');
  assert.match(login.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  assert.match(await login.text(), /name="next" value="\/dashboard\/a\/LZS\/audit"/);
});

test('production refuses to start while a demo dashboard user still has its demo password', async (t) => {
  const app = await startApp(t);
  const { store } = app.deps;
  for (const row of await store.partners.activePasswords())
    await store.partners.revokePasswords({ partnerId: row.partnerId, now: new Date() });
  for (const code of ['LZS', 'PPZ']) await store.agencies.rotateKey(code, crypto.randomUUID(), new Date());
  await assert.rejects(
    assertNoDemoSecrets(store),
    /admin@lzs\.example\.my still has the demo password.*amil user disable/,
  );
  const lzs = await store.dashboardUsers.byEmail(DEMO_LZS_ADMIN.email);
  const ppz = await store.dashboardUsers.byEmail('admin@ppz.example.my');
  await store.dashboardUsers.setDisabled(lzs?.id ?? 0, true, new Date());
  await store.dashboardUsers.setDisabled(ppz?.id ?? 0, true, new Date());
  await assertNoDemoSecrets(store);
});
