/**
 * The API access page (admin), spec 5.1's menu item: mint a report token (shown once), list and revoke the
 * agency's tokens, replace the API key (shown once), and change the callback hosts and report recipients.
 * Each change is in the audit log of every agency it touches.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { parseSettingList, rotateApiKey } from '../../core/agency-admin.ts';
import type { Deps } from '../../core/deps.ts';
import { readForm } from '../../core/http/form.ts';
import { mintReportToken } from '../../core/report-tokens.ts';
import { apiAccessPage, TOKEN_LIFETIMES, type ApiAccessView } from './api-access-page.ts';
import { recordAudit } from './audit.ts';
import { requireAdmin, sendHtml, sendRefusal } from './guards.ts';
import { dashboardHref } from './layout.ts';
import { dashboardStateOf } from './state.ts';

/** Messages of the redirects after a change (`?done=`), so a reload never repeats the change. */
const DONE: Record<string, string> = {
  'token-revoked': 'The token is revoked: it no longer opens the report API.',
  'settings-saved': 'Callback hosts and report recipients saved.',
};

type Form = [string, string][];
const field = (form: Form, name: string): string => form.find(([key]) => key === name)?.[1] ?? '';

/** GET /dashboard/a/:agency/api-access and its forms (admins only). */
export function registerApiAccess(router: Router, deps: Deps): void {
  /** Renders the page with what just happened (a secret shown once, or the problems of a form). */
  const render = async (
    ctx: Context,
    status: number,
    extra: Omit<ApiAccessView, 'agency' | 'tokens' | 'now'> = {},
  ) => {
    const state = dashboardStateOf(ctx);
    const agency = await deps.store.agencies.get(state.agency);
    if (!agency) return sendRefusal(ctx, 404, 'Not found', 'This agency no longer exists.');
    const tokens = await deps.store.dashboardUsers.reportTokensOf(state.agency);
    sendHtml(ctx, status, apiAccessPage(state, { agency, tokens, now: deps.clock.now(), ...extra }));
  };
  const back = (ctx: Context, done: keyof typeof DONE) => {
    const state = dashboardStateOf(ctx);
    ctx.status = 303;
    ctx.redirect(`${dashboardHref(state.agency, 'api-access')}?done=${done}`);
  };

  router.get('/api-access', requireAdmin, async (ctx) => {
    const done = typeof ctx.query.done === 'string' ? DONE[ctx.query.done] : undefined;
    await render(ctx, 200, done ? { status: done } : {});
  });

  router.post('/api-access/tokens', requireAdmin, async (ctx) => {
    const state = dashboardStateOf(ctx);
    const form = await readForm(ctx);
    const chosen = [...new Set(form.filter(([key]) => key === 'agencies').map(([, v]) => v))];
    const lifetime = TOKEN_LIFETIMES.find((l) => l.value === field(form, 'ttl'));
    const label = field(form, 'label').trim();
    const adminOf = new Set(state.agencies.filter((a) => a.role === 'admin').map((a) => a.code));
    const problems = [
      ...(chosen.length === 0 ? ['Choose at least one agency.'] : []),
      ...chosen.filter((a) => !adminOf.has(a)).map((a) => `You are not an admin of ${a}.`),
      ...(lifetime ? [] : ['Choose how long the token is valid.']),
      ...(label.length > 80 ? ['What it is for: at most 80 characters.'] : []),
    ];
    if (problems.length > 0 || !lifetime)
      return render(ctx, 400, { errors: { form: 'token', messages: problems } });
    const minted = await mintReportToken(deps.store, deps.config.reportTokenSecret, {
      agencies: chosen,
      ttlSeconds: lifetime.seconds,
      now: deps.clock.now(),
      label: `${label || 'dashboard'} (${state.user.email})`,
    });
    const detail = { agencies: chosen, expiresAt: minted.expiresAt.toISOString(), label };
    for (const agency of chosen)
      await recordAudit(deps, { ...state, agency }, 'token.mint', minted.jti, detail);
    await render(ctx, 201, { minted: { ...minted, agencies: chosen } });
  });

  router.post('/api-access/tokens/:jti/revoke', requireAdmin, async (ctx) => {
    const state = dashboardStateOf(ctx);
    const jti = ctx.params.jti ?? '';
    const token = await deps.store.reportTokens.get(jti);
    // A token that does not cover this agency is not this admin's to see: 404, like one that never was.
    if (!token?.agencies.includes(state.agency))
      return sendRefusal(ctx, 404, 'Not found', 'There is no such token in this agency.');
    if (await deps.store.reportTokens.revoke(jti, deps.clock.now())) {
      for (const agency of token.agencies)
        await recordAudit(deps, { ...state, agency }, 'token.revoke', jti, { agencies: token.agencies });
    }
    back(ctx, 'token-revoked');
  });

  router.post('/api-access/api-key', requireAdmin, async (ctx) => {
    const state = dashboardStateOf(ctx);
    if (field(await readForm(ctx), 'confirm') !== 'yes') {
      return render(ctx, 400, {
        errors: {
          form: 'key',
          messages: ['Tick the box to confirm: the current key stops working at once.'],
        },
      });
    }
    const apiKey = await rotateApiKey(deps.store, state.agency, deps.clock.now());
    if (apiKey === undefined) return sendRefusal(ctx, 404, 'Not found', 'This agency no longer exists.');
    await recordAudit(deps, state, 'api-key.rotate', state.agency);
    await render(ctx, 200, { apiKey, status: 'The API key is replaced: sign requests with the new one.' });
  });

  router.post('/api-access/settings', requireAdmin, async (ctx) => {
    const state = dashboardStateOf(ctx);
    const form = await readForm(ctx);
    const typed = { callbackHosts: field(form, 'callback_hosts'), recipients: field(form, 'recipients') };
    const hosts = parseSettingList('callback-hosts', typed.callbackHosts);
    const recipients = parseSettingList('recipients', typed.recipients);
    if ('problems' in hosts || 'problems' in recipients) {
      const messages = [
        ...('problems' in hosts ? hosts.problems.map((p) => `Callback hosts: ${p}`) : []),
        ...('problems' in recipients ? recipients.problems.map((p) => `Report recipients: ${p}`) : []),
      ];
      return render(ctx, 400, { errors: { form: 'settings', messages }, typed });
    }
    const before = (await deps.store.agencies.get(state.agency))?.settings;
    await deps.store.agencies.update(state.agency, {
      settings: { callbackHosts: hosts.values, reportRecipients: recipients.values },
    });
    const same = (a: readonly string[] = [], b: readonly string[]) => a.join('\n') === b.join('\n');
    if (!same(before?.callbackHosts, hosts.values))
      await recordAudit(deps, state, 'settings.callback-hosts', state.agency, {
        from: before?.callbackHosts ?? [],
        to: hosts.values,
      });
    if (!same(before?.reportRecipients, recipients.values))
      await recordAudit(deps, state, 'settings.report-recipients', state.agency, {
        from: before?.reportRecipients ?? [],
        to: recipients.values,
      });
    back(ctx, 'settings-saved');
  });
}
