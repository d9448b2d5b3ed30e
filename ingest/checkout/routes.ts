import { readFileSync } from 'node:fs';
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { orderReturnPath } from '../../core/acquirer/sandbox.ts';
import type { Deps } from '../../core/deps.ts';
import { DomainError, ERROR_CATALOGUE } from '../../core/errors.ts';
import { readForm } from '../../core/http/form.ts';
import { formatSen } from '../../core/money.ts';
import { addChargeSen } from '../../core/payments/add-charge.ts';
import { indirectCallbackFields } from '../../core/payments/callback-fields.ts';
import { settleOrder } from '../../core/payments/settle.ts';
import { timingSafeEqual } from 'node:crypto';
import type { AgencyRow, OrderRow, PaymentMethod } from '../../core/store/index.ts';
import { sendPage, wantsHtml } from './html.ts';
import { checkoutPage, errorPage, payLinkPage, pendingPage, resultPage, type Page } from './pages.ts';
import { checkPayLink } from './pay-links.ts';
import { openOrder } from './service.ts';

const ASSETS = {
  'checkout.css': { type: 'text/css; charset=utf-8', body: readAsset('checkout.css') },
  'autosubmit.js': { type: 'text/javascript; charset=utf-8', body: readAsset('autosubmit.js') },
};

function readAsset(name: string): string {
  return readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');
}

/**
 * Checkout on `{base_url}` (spec 4.1): POST /v2/checkout, the order's pages (pay, return), the pay page of
 * links and QR codes, and the static assets of those pages. A browser gets HTML pages, errors included;
 * an API client (Accept: application/json, or curl's default Accept) gets JSON and application/problem+json.
 */
export function mountCheckout(router: Router, deps: Deps): void {
  router.get('/assets/:name', (ctx) => {
    const asset = ASSETS[ctx.params.name as keyof typeof ASSETS] as
      (typeof ASSETS)['checkout.css'] | undefined;
    if (!asset) throw new DomainError('not-found');
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = asset.body;
  });

  router.post('/v2/checkout', htmlErrors, async (ctx) => {
    const entries = await readForm(ctx);
    const { order, created } = await openOrder(deps, entries, {
      path: '/v2/checkout',
      fromPayLink: false,
    });
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
  router.get('/v2/checkout/:orderNo', htmlErrors, async (ctx) => {
    const { order, agency } = await orderWithToken(deps, ctx.params.orderNo ?? '', String(ctx.query.t ?? ''));
    showOrder(ctx, deps, order, agency);
  });

  router.post('/v2/checkout/:orderNo/pay', htmlErrors, async (ctx) => {
    const form = Object.fromEntries(await readForm(ctx));
    const { order, agency } = await orderWithToken(deps, ctx.params.orderNo ?? '', form.t ?? '');
    if (order.status !== 'pending' || order.acquirerRef !== null) {
      ctx.redirect(orderReturnPath(order.orderNo));
      ctx.status = 303;
      return;
    }
    const method = deps.acquirer.methods.find((m) => m === form.method);
    const bank = deps.acquirer.banks().find((b) => b.id === form.bank);
    const errors = [
      ...(method ? [] : [{ pointer: '/method', message: 'is required: choose a payment method' }]),
      ...(method === 'fpx' && !bank
        ? [{ pointer: '/bank', message: 'is required for FPX: choose your bank' }]
        : []),
    ];
    if (!method || errors.length > 0) {
      sendPage(ctx, 422, checkoutPage({ ...pageInput(deps, order, agency), errors }));
      return;
    }
    const charge = addChargeSen(agency.settings.addCharges[method], order.amountSen);
    const now = deps.clock.now();
    const started = await deps.acquirer.initiate({
      orderNo: order.orderNo,
      method,
      bankId: method === 'fpx' ? (bank?.id ?? null) : null,
      amountSen: order.amountSen + charge,
      at: now,
    });
    const fpxBank = method === 'fpx' ? bank : undefined;
    const recorded = await deps.store.checkout.startAttempt(order.orderNo, {
      paymentMethod: method,
      bankId: fpxBank?.id ?? null,
      bankName: fpxBank?.name ?? null,
      addChargeSen: charge,
      acquirerRef: started.ref,
      at: now.toISOString(),
    });
    // Two tabs paying at once: the first attempt stands, the other payer sees its result.
    ctx.redirect(recorded ? started.redirectPath : orderReturnPath(order.orderNo));
    ctx.status = 303;
  });

  // Where the acquirer sends the payer back. The result shown is what the acquirer says when asked,
  // never what the browser brings.
  router.get('/v2/checkout/:orderNo/return', htmlErrors, async (ctx) => {
    let order = await deps.store.checkout.order(ctx.params.orderNo ?? '');
    const agency = order && (await deps.store.agencies.get(order.agencyCode));
    if (!order || !agency) throw new DomainError('not-found', 'There is no such order.');
    if (order.status === 'pending' && order.acquirerRef !== null) {
      const status = await deps.acquirer.enquire(order.acquirerRef);
      order = (await settleOrder(deps, order, status, 'return')).order;
    }
    if (!wantsHtml(ctx)) {
      ctx.body = orderJson(order, false);
      return;
    }
    if (order.acquirerRef === null) {
      throw new DomainError('bad-request', 'This order has not been paid yet: open its checkout page.');
    }
    sendPage(
      ctx,
      200,
      order.status === 'pending'
        ? pendingPage(order, agency.name)
        : resultPage(order, agency.name, indirectCallbackFields(order)),
    );
  });

  // The pay page of links and QR codes (4.1): it asks for the payer's e-mail and continues into checkout.
  const payPath = '/pay/:agency/:paymentCategory/:refNo/:amount';
  router.get(payPath, htmlErrors, async (ctx) => {
    const { link, agency, signed } = await payLink(deps, ctx);
    // A signed link's form posts its query back, so the order is opened from the same signed link.
    const action = signed ? `${ctx.path}?${ctx.querystring}` : ctx.path;
    sendPage(ctx, 200, payLinkPage({ ...link, agency, category: link.paymentCategory, action }));
  });
  router.post(payPath, htmlErrors, async (ctx) => {
    const { link, agency, signed } = await payLink(deps, ctx);
    const form = Object.fromEntries(await readForm(ctx));
    const entries: [string, string][] = [
      ['agency', agency.code],
      ['paymentCategory', link.paymentCategory],
      ['refNo', link.refNo],
      ['amount', link.amount],
      ['email', form.email ?? ''],
    ];
    const { order } = await openOrder(deps, entries, {
      path: ctx.path,
      fromPayLink: true,
      ...(signed && { extras: link.extras }),
    });
    ctx.redirect(checkoutPath(order));
    ctx.status = 303;
  });
}

/** The page an order is at: checkout while unpaid, otherwise its result (or pending) page. */
function showOrder(ctx: Context, deps: Deps, order: OrderRow, agency: AgencyRow): void {
  if (order.acquirerRef !== null) {
    ctx.redirect(orderReturnPath(order.orderNo));
    ctx.status = 303;
    return;
  }
  sendPage(ctx, 200, checkoutPage(pageInput(deps, order, agency)));
}

function pageInput(deps: Deps, order: OrderRow, agency: AgencyRow) {
  return {
    order,
    agency,
    methods: deps.acquirer.methods.map((method: PaymentMethod) => ({
      method,
      addChargeSen: addChargeSen(agency.settings.addCharges[method], order.amountSen),
    })),
    banks: deps.acquirer.banks(),
  };
}

/** The order's checkout page; its form token is the key (no session, no cookie). */
function checkoutPath(order: OrderRow): string {
  return `/v2/checkout/${encodeURIComponent(order.orderNo)}?t=${encodeURIComponent(order.formToken ?? '')}`;
}

/** The JSON answer of POST /v2/checkout for API clients (docs/checkout.md). */
function orderJson(order: OrderRow, created: boolean) {
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
  const order = await deps.store.checkout.order(orderNo);
  // One answer for "no such order" and "wrong token", so order numbers cannot be probed.
  if (!order?.formToken || !tokensEqual(order.formToken, token)) {
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
  if (checked.ok) return checked;
  throw new DomainError(checked.refusal === 'tampered' ? 'pay-link-tampered' : 'not-found', checked.detail);
}

function tokensEqual(expected: string, received: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(received);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** For browsers, a refusal is a readable page with the same status; API clients get the problem JSON. */
const htmlErrors: Middleware = async (ctx, next) => {
  try {
    await next();
  } catch (err) {
    if (!(err instanceof DomainError) || !wantsHtml(ctx)) throw err;
    const page: Page = errorPage(err.status, ERROR_CATALOGUE[err.code].title, err.detail, err.fieldErrors);
    sendPage(ctx, err.status, page);
  }
};
