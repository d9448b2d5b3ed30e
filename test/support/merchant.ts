/**
 * A merchant's web server for tests: real HTTP on 127.0.0.1. It records every request (the indirect
 * callback from the payer's browser, the signed direct one from the gateway) and answers as a script says;
 * GET /shop, once set, is the merchant's page with a signed order form (as a merchant integrates, 2.1, 5.3).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { signPost } from '../../core/signatures.ts';
import { onCleanup, type TestApp } from '../helpers.ts';

export const LZS_KEY = 'c3b5a0e2-7f1d-4c8e-9a6b-2d4f8e1a3b5c';
/** The page a 2xx answer shows (the payer's browser lands on it after the indirect callback). */
export const MERCHANT_REPLY = 'merchant got it';

export interface ReceivedCallback {
  method: string;
  path: string;
  contentType: string;
  headers: IncomingHttpHeaders;
  /** The body parsed as a form (empty for a GET). */
  form: URLSearchParams;
  /** The body as it came (UTF-8): what a merchant's verifier in another language reads. */
  body: string;
  answeredWith: number;
  /** When it arrived (ms since the epoch). */
  at: number;
}

export interface ShopOrder {
  /** Where the form posts: `${app.url}/v2/checkout`. */
  action: string;
  /** The order fields (2.1); `exp` and `signature` are added each time the page is served. */
  fields: Record<string, string>;
  apiKey: string;
}

export interface Merchant {
  url: string;
  /** Every request but GET /shop, in arrival order. */
  received: ReceivedCallback[];
  /** Sets the order the shop page offers. */
  shop(order: ShopOrder): void;
  /** Resolves once `count` requests arrived (or rejects after `ms`). */
  waitFor(count: number, ms?: number): Promise<void>;
  /** The first received request `match` accepts, waiting up to `ms` for it. */
  find(match: (r: ReceivedCallback) => boolean, what: string, ms?: number): Promise<ReceivedCallback>;
}

/** `answer` picks the status of each request (default 200). */
export async function startMerchant(
  t: TestContext,
  answer: (form: URLSearchParams, nth: number) => number = () => 200,
): Promise<Merchant> {
  const received: ReceivedCallback[] = [];
  let order: ShopOrder | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      if (req.method === 'GET' && path === '/shop' && order) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(shopPage(order));
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      const form = new URLSearchParams(body);
      const status = answer(form, received.length);
      received.push({
        method: req.method ?? '',
        path,
        contentType: req.headers['content-type'] ?? '',
        headers: req.headers,
        form,
        body,
        answeredWith: status,
        at: Date.now(),
      });
      if (status < 300) {
        res
          .writeHead(status, { 'content-type': 'text/html; charset=utf-8' })
          .end(`<!doctype html><title>Merchant</title><h1>${MERCHANT_REPLY}</h1>`);
      } else {
        res.writeHead(status, { 'content-type': 'text/plain' }).end('try again');
      }
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
  const find: Merchant['find'] = async (match, what, ms = 5000) => {
    const until = Date.now() + ms;
    for (;;) {
      const found = received.find(match);
      if (found) return found;
      if (Date.now() > until) {
        const seen = received.map((r) => `${r.method} ${r.path} [${[...r.form.keys()].join(',')}]`);
        throw new Error(`no ${what} within ${ms} ms; received: ${seen.join('; ') || 'nothing'}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    shop(next) {
      order = next;
    },
    async waitFor(count, ms = 5000) {
      await find(() => received.length >= count, `${count} requests`, ms);
    },
    find,
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

/** A signed order (5.3, POST rule) posted as an API client would; the response as it came. */
export async function postOrder(
  app: TestApp,
  fields: Record<string, string>,
  options: { accept?: string; sign?: boolean; key?: string } = {},
): Promise<Response> {
  const body =
    options.sign === false
      ? new URLSearchParams(fields).toString()
      : signPost(fields, options.key ?? LZS_KEY, app.deps.clock.now()).body;
  return fetch(`${app.url}/v2/checkout`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: options.accept ?? 'application/json',
    },
    body,
    redirect: 'manual',
  });
}
