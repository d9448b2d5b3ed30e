import type { AppRouter } from '../../core/http/state.ts';
import type { Deps } from '../../core/deps.ts';
import { readRawBody } from '../../core/http/raw-body.ts';
import { formatSen, ringgitStringToSen } from '../../core/money.ts';
import { signPost, verifyCallback } from '../../core/signatures.ts';
import { html, sendPage } from './html.ts';

const DEMO_AGENCY = 'LZS';
/** What every order of the demo shop costs. */
const DEMO_AMOUNT = '10.00';
const KEEP = 50;

interface Received {
  at: string;
  kind: 'direct (signed)' | 'indirect (browser)';
  verified: boolean | null;
  /** The merchant's check of the paid amount against its order. */
  amountCheck: string;
  fields: [string, string][];
}

/**
 * A demo merchant for embedded mode (SEED_DEMO): a shop page whose "Pay" button posts a signed order of
 * agency LZS, and a receiver at its returnUrl that shows every callback it got, direct ones verified with
 * the merchant toolkit. Not mounted without demo data. Kept in memory: it is a demonstration.
 */
export function mountDemoMerchant(router: AppRouter, deps: Deps): void {
  if (!deps.config.seedDemo) return;
  const received: Received[] = [];

  router.get('/demo/shop', async (ctx) => {
    const apiKey = (await deps.store.agencies.apiKeyOf(DEMO_AGENCY)) ?? '';
    // Never ctx.host: a forged Host header would make the signed order call back wherever it says.
    const origin = deps.config.publicUrls.base;
    const { fields } = signPost(
      {
        agency: DEMO_AGENCY,
        refNo: `DEMO-${Date.now().toString(36).toUpperCase()}`,
        amount: DEMO_AMOUNT,
        email: 'payer@example.my',
        returnUrl: `${origin}/demo/receiver`,
      },
      apiKey,
      deps.clock.now(),
    );
    sendPage(ctx, 200, {
      onlyIn: 'en',
      title: 'Demo shop',
      body: html`<h1>Demo shop (merchant LZS)</h1>
        <p>
          Zakat fitrah for a family: RM ${DEMO_AMOUNT}. The button posts a signed order (spec 2.1, 5.3) to
          checkout, as a merchant's site would. Its signature is valid for 60 seconds: reload to sign again.
        </p>
        <form method="post" action="/v2/checkout">
          ${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
          <button type="submit">Pay RM ${DEMO_AMOUNT}</button>
        </form>
        <p><a href="/demo/receiver">What the merchant received</a></p>`,
    });
  });

  router.post('/demo/receiver', async (ctx) => {
    const form = new URLSearchParams((await readRawBody(ctx, 16 * 1024)).toString('utf8'));
    const signed = form.has('signature');
    const apiKey = await deps.store.agencies.apiKeyOf(form.get('agency') ?? '');
    received.unshift({
      at: deps.clock.now().toISOString(),
      kind: signed ? 'direct (signed)' : 'indirect (browser)',
      verified: signed ? apiKey !== undefined && verifyCallback(form, apiKey) : null,
      amountCheck: checkAmount(form, signed),
      fields: [...form.entries()],
    });
    received.length = Math.min(received.length, KEEP);
    if (signed) {
      ctx.body = 'OK';
      return;
    }
    ctx.redirect('/demo/receiver');
    ctx.status = 303;
  });

  router.get('/demo/receiver', (ctx) => {
    sendPage(ctx, 200, {
      onlyIn: 'en',
      title: 'Demo receiver',
      refreshSeconds: 5,
      body: html`<h1>Callbacks the demo merchant received</h1>
        <p class="muted">
          Newest first; this page reloads every 5 s. <a href="/demo/shop">Back to the shop</a>
        </p>
        ${received.length === 0 ? html`<p>None yet.</p>` : ''}
        ${received.map(
          (r) =>
            html`<h2>
                ${r.kind}${r.verified === null ? '' : r.verified ? ': signature verified' : ': SIGNATURE INVALID'}
              </h2>
              <p class="muted">${r.at}</p>
              <p>${r.amountCheck}</p>
              <dl class="summary">
                ${r.fields.map(
                  ([k, v]) =>
                    html`<dt>${k}</dt>
                      <dd>${v}</dd>`,
                )}
              </dl>`,
        )}`,
    });
  });
}

/**
 * What a careful merchant checks before fulfilling: the direct callback's `amount` is the order's (net),
 * the indirect one's is gross (amount + addCharge, spec 2.4), so the order amount is recovered from it.
 */
function checkAmount(form: URLSearchParams, direct: boolean): string {
  const amount = ringgitStringToSen(form.get('amount') ?? '');
  const addCharge = ringgitStringToSen(form.get('addCharge') ?? '0.00') ?? 0;
  const orderSen = amount === undefined ? undefined : direct ? amount : amount - addCharge;
  const said = `amount ${form.get('amount') ?? ''} (add charge ${formatSen(addCharge)})`;
  return orderSen === ringgitStringToSen(DEMO_AMOUNT)
    ? `${said}: matches the order (${DEMO_AMOUNT})`
    : `${said}: DOES NOT MATCH the order (${DEMO_AMOUNT})`;
}
