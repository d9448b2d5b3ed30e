/**
 * A merchant's web server for the browser tests: real HTTP on 127.0.0.1. GET /shop is the merchant's page
 * with a signed order form posting to checkout (as a merchant integrates, spec 2.1 and 5.3); every other
 * request is recorded and answered 200 with a small page, so the indirect callback (the payer's browser)
 * and the direct one (the gateway, signed) both land here and can be told apart.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { signPost } from '../../core/signatures.ts';
import { onCleanup } from '../helpers.ts';

export const LZS_KEY = 'c3b5a0e2-7f1d-4c8e-9a6b-2d4f8e1a3b5c';

export interface ReceivedRequest {
  method: string;
  path: string;
  contentType: string;
  headers: IncomingHttpHeaders;
  /** The body parsed as a form (empty for a GET). */
  form: URLSearchParams;
}

export interface ShopOrder {
  /** Where the form posts: `${app.url}/v2/checkout`. */
  action: string;
  /** The order fields (2.1); `exp` and `signature` are added each time the page is served. */
  fields: Record<string, string>;
  apiKey: string;
}

export interface MerchantReceiver {
  url: string;
  /** Every request but GET /shop, in arrival order. */
  received: ReceivedRequest[];
  /** Sets the order the shop page offers. */
  shop(order: ShopOrder): void;
  /** The first received request that `match` accepts, waiting up to `ms` for it. */
  waitFor(match: (r: ReceivedRequest) => boolean, what: string, ms?: number): Promise<ReceivedRequest>;
}

export const MERCHANT_REPLY = 'merchant got it';

export async function startMerchantReceiver(t: TestContext): Promise<MerchantReceiver> {
  const received: ReceivedRequest[] = [];
  let order: ShopOrder | undefined;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      if (req.method === 'GET' && path === '/shop') {
        if (!order) {
          res.writeHead(404, { 'content-type': 'text/plain' }).end('no order set for the shop');
          return;
        }
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(shopPage(order));
        return;
      }
      received.push({
        method: req.method ?? '',
        path,
        contentType: req.headers['content-type'] ?? '',
        headers: req.headers,
        form: new URLSearchParams(Buffer.concat(chunks).toString('utf8')),
      });
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(`<!doctype html><title>Merchant</title><h1>${MERCHANT_REPLY}</h1>`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(
    t,
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    shop(next) {
      order = next;
    },
    async waitFor(match, what, ms = 5000) {
      const until = Date.now() + ms;
      for (;;) {
        const found = received.find(match);
        if (found) return found;
        if (Date.now() > until) {
          const seen = received.map((r) => `${r.method} ${r.path} [${[...r.form.keys()].join(',')}]`);
          throw new Error(`no ${what} within ${ms} ms; received: ${seen.join('; ') || 'nothing'}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

/** The merchant's own escaping (a merchant has its own templates, not ours). */
const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The merchant's page: hidden fields, signed now (the signature lives 60 s), and a button. */
function shopPage(order: ShopOrder): string {
  const { fields } = signPost(order.fields, order.apiKey);
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n      ');
  return `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8"><title>Merchant shop</title></head>
  <body>
    <h1>Merchant shop</h1>
    <form method="post" action="${escapeHtml(order.action)}">
      ${inputs}
      <button type="submit">Pay with amil</button>
    </form>
  </body>
</html>`;
}
