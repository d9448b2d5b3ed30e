import { readFileSync } from 'node:fs';
import type { AppRouter } from '../../core/http/state.ts';
import type { Context } from 'koa';
import { requireAcquirer } from '../../core/acquirer/index.ts';
import type { Acquirer } from '../../core/acquirer/types.ts';
import type { Deps } from '../../core/deps.ts';
import { DomainError } from '../../core/errors.ts';
import { readForm } from '../../core/http/form.ts';
import { formatSen, ringgitStringToSen } from '../../core/money.ts';
import { addChargeSen } from '../../core/payments/add-charge.ts';
import { indirectCallbackFields } from '../../core/payments/callback-fields.ts';
import { settleOrder } from '../../core/payments/settle.ts';
import type { AgencyRow, OrderRow, PaymentMethod } from '../../core/store/index.ts';
import { sendPage, wantsHtml } from './html.ts';
import { constantTimeEqual } from '../../core/constant-time.ts';
import { checkoutPage, payLinkPage } from './pages.ts';
import { pendingPage, resultPage } from './result-pages.ts';
import type { Page } from './page-parts.ts';
import { payerLang } from './lang.ts';
import { checkPayLink } from './pay-links.ts';
import { openOrder } from './service.ts';
import { payLinkId } from '../../core/payments/pay-link.ts';
import type { CheckoutOrderResponse } from '../../schemas/types.ts';

// A Map, not an object: a name like `constructor` must not find Object.prototype's (issue 12).
const ASSETS = new Map([
  ['checkout.css', { type: 'text/css; charset=utf-8', body: readAsset('checkout.css') }],
  ['autosubmit.js', { type: 'text/javascript; charset=utf-8', body: readAsset('autosubmit.js') }],
]);

function readAsset(name: string): string {
  return readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');
}

/**
 * Checkout on `{base_url}` (spec 4.1): POST /v2/checkout, the order's pages (pay, return), the pay page of
 * links and QR codes, and the static assets of those pages. A browser gets HTML pages, errors included;
 * an API client (Accept: application/json, or curl's default Accept) gets JSON and application/problem+json.
 */
export function mountCheckout(router: AppRouter, deps: Deps): void {
  const send = (ctx: Context, status: number, page: Page) =>
    sendPage(ctx, status, { ...page, sandbox: deps.acquirer?.sandbox === true });

  router.get('/assets/:name', (ctx) => {
    const asset = ASSETS.get(ctx.params.name ?? '');
    if (!asset) throw new DomainError('not-found');
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = asset.body;
  });

  // An agency's logo (amil agency set --logo): ours to serve, so payer pages load nothing from elsewhere.
  // Pages link it with `?v=` and its hash (page-parts.ts), so the day it is cached ends with a new logo.
  router.get('/agency-logo/:code', async (ctx) => {
    const logo = (await deps.store.agencies.get(ctx.params.code ?? ''))?.settings.logo;
    if (!logo) throw new DomainError('not-found');
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.etag = logo.sha256;
    ctx.type = logo.type;
    ctx.status = 200; // koa judges freshness only for a 2xx
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.body = Buffer.from(logo.base64, 'base64');
  });

  router.post('/v2/checkout', async (ctx) => {
    requireAcquirer(deps.acquirer);
    const entries = await readForm(ctx);
    const { order, created } = await openOrder(deps, entries, { path: '/v2/checkout' });
    if (!wantsHtml(ctx)) {
      ctx.status = created ? 201 : 200;
      ctx.body = orderJson(order, created);
      return;
    }
    // Post/redirect/get: a reload or Back shows the page again without re-sending the merchant's signed form.
    ctx.redirect(checkoutPath(order));
    ctx.status = 303;
  });

  // The checkout page again (reload, or an API client sending its payer here): the order's token is the key.
  router.get('/v2/checkout/:orderNo', async (ctx) => {
    const acquirer = requireAcquirer(deps.acquirer);
    const { order, agency } = await orderWithToken(deps, ctx.params.orderNo ?? '', String(ctx.query.t ?? ''));
    if (order.acquirerRef !== null) {
      ctx.redirect(returnPath(order));
      ctx.status = 303;
      return;
    }
    send(ctx, 200, checkoutPage(payerLang(ctx), pageInput(acquirer, order, agency)));
  });

  router.post('/v2/checkout/:orderNo/pay', async (ctx) => {
    const acquirer = requireAcquirer(deps.acquirer);
    const form = new Map(await readForm(ctx));
    const { order, agency } = await orderWithToken(deps, ctx.params.orderNo ?? '', form.get('t') ?? '');
    if (order.status !== 'pending' || order.acquirerRef !== null) {
      ctx.redirect(returnPath(order));
      ctx.status = 303;
      return;
    }
    const method = acquirer.methods.find((m) => m === form.get('method'));
    const bank = acquirer.banks().find((b) => b.id === form.get('bank'));
    const errors = [
      ...(method ? [] : [{ pointer: '/method', message: 'is required: choose a payment method' }]),
      ...(method === 'fpx' && !bank
        ? [{ pointer: '/bank', message: 'is required for FPX: choose your bank' }]
        : []),
    ];
    if (!method || errors.length > 0) {
      send(ctx, 422, checkoutPage(payerLang(ctx), { ...pageInput(acquirer, order, agency), errors }));
      return;
    }
    // A once-link paid (or at the bank) meanwhile: say so before the payer reaches a bank.
    if (order.payLink !== null && order.payLinkUses === 'once') {
      refuseTakenLink(await deps.store.orders.payLinkState(order.payLink));
    }
    const charge = addChargeSen(agency.settings.addCharges[method], order.amountSen);
    const now = deps.clock.now();
    const started = await acquirer.initiate({
      orderNo: order.orderNo,
      method,
      bankId: method === 'fpx' ? (bank?.id ?? null) : null,
      amountSen: order.amountSen + charge,
      at: now,
      returnPath: returnPath(order),
    });
    const fpxBank = method === 'fpx' ? bank : undefined;
    const refused = await deps.store.orders.startAttempt(order.orderNo, {
      paymentMethod: method,
      bankId: fpxBank?.id ?? null,
      bankName: fpxBank?.name ?? null,
      addChargeSen: charge,
      acquirerRef: started.ref,
      at: now.toISOString(),
    });
    if (refused === 'link-paid' || refused === 'link-in-progress') {
      refuseTakenLink(refused === 'link-paid' ? 'paid' : 'in-progress');
    }
    // Two tabs paying at once: the first attempt stands, the other payer sees its result.
    ctx.redirect(refused === undefined ? started.redirectPath : returnPath(order));
    ctx.status = 303;
  });

  // Where the acquirer sends the payer back, with the order's token (only its holder sees the order).
  // The result shown is what the acquirer says when asked, never what the browser brings.
  router.get('/v2/checkout/:orderNo/return', async (ctx) => {
    const acquirer = requireAcquirer(deps.acquirer);
    const found = await orderWithToken(deps, ctx.params.orderNo ?? '', String(ctx.query.t ?? ''));
    const { agency } = found;
    let { order } = found;
    if (order.status === 'pending' && order.acquirerRef !== null) {
      const status = await acquirer.enquire(order.acquirerRef);
      order = (await settleOrder(deps, order, status, 'return')).order;
    }
    if (!wantsHtml(ctx)) {
      ctx.body = orderJson(order, false);
      return;
    }
    if (order.acquirerRef === null) {
      throw new DomainError('bad-request', 'This order has not been paid yet: open its checkout page.');
    }
    const lang = payerLang(ctx);
    send(
      ctx,
      200,
      order.status === 'pending'
        ? pendingPage(lang, order, agency)
        : resultPage(lang, { order, agency, fields: indirectCallbackFields(order, acquirer.sandbox) }),
    );
  });

  // The pay page of links and QR codes (4.1): it asks for the payer's e-mail and continues into checkout.
  // Every visitor gets an order of their own (docs/checkout.md, "Pay links"): a pay link never resumes,
  // blocks or shows anyone else's order, and the merchant's own orders live apart from it.
  const payPath = '/pay/:agency/:paymentCategory/:refNo/:amount';
  router.get(payPath, async (ctx) => {
    requireAcquirer(deps.acquirer);
    const { link, agency, signed, id } = await payLink(deps, ctx);
    if (link.uses === 'once') refuseTakenLink(await deps.store.orders.payLinkState(id));
    // A signed link's form posts its query back, so the order is opened from the same signed link.
    const action = signed ? `${ctx.path}?${ctx.querystring}` : ctx.path;
    send(
      ctx,
      200,
      payLinkPage(payerLang(ctx), {
        ...link,
        amountSen: ringgitStringToSen(link.amount) ?? 0,
        agency,
        category: link.paymentCategory,
        action,
      }),
    );
  });
  router.post(payPath, async (ctx) => {
    requireAcquirer(deps.acquirer);
    const { link, agency, signed, id } = await payLink(deps, ctx);
    if (link.uses === 'once') refuseTakenLink(await deps.store.orders.payLinkState(id));
    const form = new Map(await readForm(ctx));
    const entries: [string, string][] = [
      ['agency', agency.code],
      ['paymentCategory', link.paymentCategory],
      ['refNo', link.refNo],
      ['amount', link.amount],
      ['email', form.get('email') ?? ''],
    ];
    let order: OrderRow;
    try {
      ({ order } = await openOrder(deps, entries, {
        path: ctx.path,
        payLink: { link: id, uses: link.uses },
        ...(signed && { extras: link.extras }),
      }));
    } catch (err) {
      // A payer's typo: the same form again, to correct it (API clients get the problem).
      if (!(err instanceof DomainError) || err.code !== 'validation-failed' || !wantsHtml(ctx)) throw err;
      const action = signed ? `${ctx.path}?${ctx.querystring}` : ctx.path;
      const page = payLinkPage(payerLang(ctx), {
        ...link,
        amountSen: ringgitStringToSen(link.amount) ?? 0,
        agency,
        category: link.paymentCategory,
        action,
        errors: err.fieldErrors,
      });
      send(ctx, 422, page);
      return;
    }
    ctx.redirect(checkoutPath(order));
    ctx.status = 303;
  });
}

function pageInput(acquirer: Acquirer, order: OrderRow, agency: AgencyRow) {
  return {
    order,
    agency,
    methods: acquirer.methods.map((method: PaymentMethod) => ({
      method,
      addChargeSen: addChargeSen(agency.settings.addCharges[method], order.amountSen),
    })),
    banks: acquirer.banks(),
    // Cancel: a pay link's own page, or the merchant's site (its callback says nothing until paid).
    cancelHref: order.payLink ?? (order.returnUrl ? new URL(order.returnUrl).origin : undefined),
  };
}

/** A once-link that is paid, or being paid at the bank, takes no new payment. */
function refuseTakenLink(state: 'free' | 'paid' | 'in-progress'): void {
  if (state === 'paid') {
    throw new DomainError('pay-link-paid', 'This link has been paid already: there is nothing more to pay.');
  }
  if (state === 'in-progress') {
    throw new DomainError(
      'pay-link-in-progress',
      'Someone is paying this link right now. If that payment does not go through, the link can be paid again in a few minutes.',
    );
  }
}

/** The order's checkout page; its form token is the key (no session, no cookie). */
function checkoutPath(order: OrderRow): string {
  return `/v2/checkout/${encodeURIComponent(order.orderNo)}?t=${encodeURIComponent(order.formToken ?? '')}`;
}

/** The order's return page (where the acquirer sends the payer back), keyed by the same token. */
function returnPath(order: OrderRow): string {
  return `/v2/checkout/${encodeURIComponent(order.orderNo)}/return?t=${encodeURIComponent(order.formToken ?? '')}`;
}

/** The JSON answer of POST /v2/checkout for API clients (docs/checkout.md), as the OpenAPI document says. */
function orderJson(order: OrderRow, created: boolean): CheckoutOrderResponse {
  return {
    orderNo: order.orderNo,
    agency: order.agencyCode,
    refNo: order.refNo,
    amount: formatSen(order.amountSen),
    status: order.status,
    resumed: !created,
    checkoutUrl: checkoutPath(order),
  };
}

async function orderWithToken(
  deps: Deps,
  orderNo: string,
  token: string,
): Promise<{ order: OrderRow; agency: AgencyRow }> {
  const order = await deps.store.orders.order(orderNo);
  // One answer for "no such order" and "wrong token", so order numbers cannot be probed.
  if (!order?.formToken || !constantTimeEqual(token, order.formToken)) {
    throw new DomainError(
      'forbidden',
      'This payment form has expired or is not valid; start again from the merchant.',
    );
  }
  const agency = await deps.store.agencies.get(order.agencyCode);
  if (!agency) throw new DomainError('not-found');
  return { order, agency };
}

/**
 * The pay link of the request, checked (ingest/checkout/pay-links.ts): unknown agency or category, or a bad
 * refNo or amount, is 404; a signed link whose signature does not match is 403 `pay-link-tampered`.
 */
async function payLink(deps: Deps, ctx: Context) {
  const { agency = '', paymentCategory = '', refNo = '', amount = '' } = ctx.params as Record<string, string>;
  const checked = await checkPayLink(
    deps,
    { agency, paymentCategory, refNo, amount },
    new URLSearchParams(ctx.querystring),
  );
  if (!checked.ok) {
    throw new DomainError(checked.refusal === 'tampered' ? 'pay-link-tampered' : 'not-found', checked.detail);
  }
  return { ...checked, id: payLinkId(deps.config.payLinkSecret, checked.link, checked.signed) };
}
