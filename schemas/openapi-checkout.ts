/** OpenAPI paths of checkout on {base_url} (spec 4.1): the merchant's order, the payer's pages, the sandbox. */
import { hostServer, problemResponse, type Json } from './openapi-parts.ts';

/** A refusal: problem+json for API clients, a readable page for browsers. */
const problem = (description: string): Json => {
  const base = problemResponse(description);
  return { ...base, content: { ...(base.content as Json), 'text/html': { schema: { type: 'string' } } } };
};
const html = (description: string): Json => ({
  description,
  content: { 'text/html': { schema: { type: 'string' } } },
});
const redirect = (description: string): Json => ({
  description,
  headers: { Location: { schema: { type: 'string' } } },
});
/** The merchant's order as JSON: what an API client reads its checkoutUrl and status from. */
const orderJson = (description: string): Json => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/CheckoutOrderResponse' } } },
});
const server = hostServer('base_url');
const param = (name: string, description: string, where = 'path'): Json => ({
  name,
  in: where,
  required: true,
  description,
  schema: { type: 'string' },
});
const form = (schema: Json): Json => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema } },
});
const TAGS = ['Checkout'];

export function checkoutPaths(): Json {
  const orderNo = param('orderNo', 'Service order number (fpx_seller_order_no)');
  return {
    '/v2/checkout': {
      servers: server,
      post: {
        operationId: 'postCheckout',
        tags: TAGS,
        summary: 'Open (or resume) a payment order and send the payer to the hosted checkout',
        description:
          'Form-encoded fields of spec 2.1, signed by the POST rule of 5.3 (with exp) unless the agency accepts unsigned orders. A browser (Accept: text/html) is redirected (303) to the checkout page; an API client gets JSON with checkoutUrl to send its payer to. The same refNo and amount resume the unpaid order. Refusals are HTML pages for browsers and problem+json otherwise; nothing is stored.',
        security: [{ signedRequest: [] }, {}],
        requestBody: form({ $ref: '#/components/schemas/CheckoutRequest' }),
        responses: {
          '201': orderJson('API clients: the order opened (resumed: false)'),
          '200': orderJson(
            'API clients: the unpaid order with this refNo and amount, resumed (resumed: true)',
          ),
          '303': redirect('Browsers: to the checkout page of the order'),
          '400': problem(
            'A field appears twice, the form is broken, or a field is named __proto__, constructor or prototype.',
          ),
          '401': problem(
            'Signature or exp missing, malformed, expired or wrong (an unknown agency is answered the same way).',
          ),
          '409': problem('The refNo has an order for another amount, or is already paid, or failed.'),
          '413': problem('The form is over 16 KiB.'),
          '415': problem('Not application/x-www-form-urlencoded.'),
          '422': problem('A field breaks the rules of 2.1: every problem with its pointer.'),
          '503': problem('Payments are not configured on this deployment (ACQUIRER=none).'),
        },
      },
    },
    '/v2/checkout/{orderNo}': {
      servers: server,
      get: {
        operationId: 'getCheckoutPage',
        tags: TAGS,
        summary: 'The hosted checkout page of an order: amount, add charge per method, FPX bank list',
        parameters: [orderNo, param('t', "The order's form token (from checkoutUrl)", 'query')],
        responses: {
          '200': html('The checkout page'),
          '303': redirect('Already paid or in progress: to the return page'),
          '403': problem('Unknown order or wrong token.'),
        },
      },
    },
    '/v2/checkout/{orderNo}/pay': {
      servers: server,
      post: {
        operationId: 'postCheckoutPay',
        tags: TAGS,
        summary: "The payer's choice (method, FPX bank): starts the payment at the acquirer",
        parameters: [orderNo],
        requestBody: form({
          type: 'object',
          required: ['t', 'method'],
          properties: {
            t: { type: 'string', description: 'Form token of the order (CSRF)' },
            method: { enum: ['fpx', 'card', 'ewallet'] },
            bank: { type: 'string', description: 'FPX bank id; SBX<code> sandbox banks decide at once' },
          },
        }),
        responses: {
          '303': redirect('To the acquirer (the sandbox bank page), or straight to the return page'),
          '403': problem('Unknown order or wrong token.'),
          '422': html('No method, or FPX without a bank: the checkout page again, with the problems'),
        },
      },
    },
    '/v2/checkout/{orderNo}/return': {
      servers: server,
      get: {
        operationId: 'getCheckoutReturn',
        tags: TAGS,
        summary: 'Where the acquirer sends the payer back: the result as the acquirer reports it',
        description:
          "Only the holder of the order's token sees it. Success or failed: a page whose form posts the indirect callback (2.4, unsigned, amount gross) to returnUrl, auto-submitted by script and with a visible button. Pending: a page that looks again every 10 s.",
        parameters: [orderNo, param('t', "The order's form token (the acquirer brings it back)", 'query')],
        responses: {
          '200': {
            description:
              'Browsers: the result or pending page. API clients (Accept: application/json): the order',
            content: { ...(html('').content as Json), ...(orderJson('').content as Json) },
          },
          '403': problem(
            'Unknown order, no token or a wrong one: one answer, so order numbers cannot be probed.',
          ),
        },
      },
    },
    '/pay/{agency}/{paymentCategory}/{refNo}/{amount}': {
      servers: server,
      get: {
        operationId: 'getPayPage',
        tags: TAGS,
        summary: "The pay page of a payment link or QR code: asks for the payer's e-mail",
        description:
          "Unsigned (anyone may build one; its query is ignored), or signed by the QR generator: then the query carries the extras as x.<key>=<value> and the service's signature sig, which must match the agency, category, refNo, amount and every extra (403 otherwise). The form posts back to the same URL, query included.",
        parameters: [
          param('agency', 'Agency code'),
          param('paymentCategory', "One of the agency's payment categories"),
          param('refNo', 'Reference, URL-encoded; no ~'),
          param('amount', 'Ringgit with two decimals, at least 1.00'),
          {
            name: 'sig',
            in: 'query',
            required: false,
            description: "Signed links: the service's signature (32 hex) over the path fields and extras.",
            schema: { type: 'string', pattern: '^[0-9a-f]{32}$' },
          },
          {
            name: 'x.{key}',
            in: 'query',
            required: false,
            description:
              'Signed links: one parameter per extra (key: 1 to 32 letters, digits or _; value: 1 to 64 printable ASCII without ~); stored with the order.',
            schema: { type: 'string' },
          },
        ],
        responses: {
          '200': html('The pay page'),
          '403': problem('A signed link whose sig does not match (pay-link-tampered): it was changed.'),
          '404': problem(
            'Unknown agency or category, or a bad link (an amount above CHECKOUT_MAX_AMOUNT too).',
          ),
          '409': problem(
            'A link signed to be paid once is paid (pay-link-paid), or being paid (pay-link-in-progress).',
          ),
          '503': problem('Payments are not configured on this deployment (ACQUIRER=none).'),
        },
      },
      post: {
        operationId: 'postPayPage',
        tags: TAGS,
        summary:
          "Opens a new order of the visitor's own for a pay link (no returnUrl: the payer ends on our receipt page); a signed link's extras are stored with it",
        requestBody: form({
          type: 'object',
          required: ['email'],
          properties: { email: { type: 'string', format: 'email' } },
        }),
        responses: {
          '303': redirect('To the checkout page of the order'),
          '400': problem('A form field named __proto__, constructor or prototype.'),
          '403': problem(
            'A signed link whose sig does not match, or a malformed query (a repeat, a bad extra, x.__proto__) (pay-link-tampered); nothing is stored.',
          ),
          '404': problem('Unknown agency or category, or a bad link.'),
          '409': problem(
            'A link signed to be paid once is paid (pay-link-paid), or being paid (pay-link-in-progress).',
          ),
          '422': problem('The e-mail (or the link) breaks the rules of 2.1.'),
          '503': problem('Payments are not configured on this deployment (ACQUIRER=none).'),
        },
      },
    },
    '/sandbox/{ref}': {
      servers: server,
      get: {
        operationId: 'getSandboxBank',
        tags: ['Sandbox acquirer'],
        summary: 'The sandbox bank page: pick the outcome of a payment, or resolve a pending one',
        description: 'Only where ACQUIRER=sandbox (never in production unless STAGING=true).',
        parameters: [param('ref', 'Sandbox payment reference (sbx_...)')],
        responses: { '200': html('The sandbox bank page'), '404': problem('No such sandbox payment.') },
      },
      post: {
        operationId: 'postSandboxBank',
        tags: ['Sandbox acquirer'],
        summary: 'Decide a sandbox payment (curl -d outcome=00): 00, 09, 99, 76, 51 or BC',
        requestBody: form({
          type: 'object',
          required: ['outcome'],
          properties: { outcome: { enum: ['00', '09', '99', '76', '51', 'BC'] } },
        }),
        responses: {
          '303': redirect("Back to the order's return page"),
          '404': problem('No such sandbox payment.'),
          '409': problem('Already decided.'),
          '422': problem('Not one of the outcomes.'),
        },
      },
    },
    '/demo/shop': {
      servers: server,
      get: {
        operationId: 'getDemoShop',
        tags: ['Demo (embedded mode)'],
        summary: 'A demo merchant page posting a signed LZS order (only with SEED_DEMO)',
        responses: { '200': html('The demo shop') },
      },
    },
    '/demo/receiver': {
      servers: server,
      get: {
        operationId: 'getDemoReceiver',
        tags: ['Demo (embedded mode)'],
        summary: 'The callbacks the demo merchant received, direct ones verified (only with SEED_DEMO)',
        responses: { '200': html('The list') },
      },
      post: {
        operationId: 'postDemoReceiver',
        tags: ['Demo (embedded mode)'],
        summary: "The demo merchant's returnUrl: takes indirect and direct callbacks",
        responses: {
          '200': { description: 'Direct callback taken' },
          '303': redirect('Indirect: to the list'),
        },
      },
    },
    '/assets/{name}': {
      servers: server,
      get: {
        operationId: 'getAsset',
        tags: TAGS,
        summary: "The checkout pages' stylesheet and script (served here: no CDN)",
        parameters: [param('name', 'checkout.css or autosubmit.js')],
        responses: { '200': { description: 'The file' }, '404': problem('No such asset.') },
      },
    },
    '/agency-logo/{code}': {
      servers: server,
      get: {
        operationId: 'getAgencyLogo',
        tags: TAGS,
        summary: "An agency's logo, shown on its payer pages (amil agency set --logo): ETag, cached a day",
        parameters: [param('code', 'Agency code')],
        responses: {
          '200': {
            description: 'The image',
            content: { 'image/png': {}, 'image/jpeg': {}, 'image/webp': {} },
          },
          '304': { description: 'Not modified (If-None-Match)' },
          '404': problem('No such agency, or it has no logo.'),
        },
      },
    },
    '/': {
      servers: server,
      get: {
        operationId: 'getLanding',
        tags: ['Demo (embedded mode)'],
        summary: 'For browsers, a landing page: demo shop, docs, OpenAPI document (only with SEED_DEMO)',
        responses: { '200': html('The landing page'), '404': problem('API clients, or no demo data.') },
      },
    },
    '/docs/': {
      servers: server,
      get: {
        operationId: 'getDocsIndex',
        tags: ['Demo (embedded mode)'],
        summary: 'The list of docs/*.md (only with SEED_DEMO)',
        responses: { '200': html('The list') },
      },
    },
    '/docs/{name}': {
      servers: server,
      get: {
        operationId: 'getDoc',
        tags: ['Demo (embedded mode)'],
        summary: 'One of docs/*.md as plain text (only with SEED_DEMO)',
        parameters: [param('name', 'File name, e.g. checkout.md')],
        responses: {
          '200': { description: 'The file', content: { 'text/plain': { schema: { type: 'string' } } } },
          '404': problem('No such document.'),
        },
      },
    },
  };
}
