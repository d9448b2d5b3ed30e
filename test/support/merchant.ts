/** A merchant's callback receiver for tests: real HTTP on 127.0.0.1, answering as a script says. */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { signPost } from '../../core/signatures.ts';
import { onCleanup, type TestApp } from '../helpers.ts';

export const LZS_KEY = 'c3b5a0e2-7f1d-4c8e-9a6b-2d4f8e1a3b5c';

export interface ReceivedCallback {
  path: string;
  contentType: string;
  form: URLSearchParams;
  answeredWith: number;
}

export interface Merchant {
  url: string;
  received: ReceivedCallback[];
  /** Resolves once `count` callbacks arrived (or rejects after `ms`). */
  waitFor(count: number, ms?: number): Promise<void>;
}

/** `answer` picks the status of each callback (default 200). */
export async function startMerchant(
  t: TestContext,
  answer: (form: URLSearchParams, nth: number) => number = () => 200,
): Promise<Merchant> {
  const received: ReceivedCallback[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const status = answer(form, received.length);
      received.push({
        path: req.url ?? '',
        contentType: req.headers['content-type'] ?? '',
        form,
        answeredWith: status,
      });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'OK' : 'try again');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(t, () => new Promise((resolve) => server.close(resolve)));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    async waitFor(count, ms = 5000) {
      const until = Date.now() + ms;
      while (received.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} callbacks, got ${received.length}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
  };
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
