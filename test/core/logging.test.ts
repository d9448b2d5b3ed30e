import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { requestContext } from '../../core/http/request-context.ts';
import type { AppState } from '../../core/http/state.ts';
import { REDACT_PATHS } from '../../core/logger.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { bankRecord, DEMO_PASSWORD, startApp } from '../helpers.ts';
import { startMerchant } from '../support/merchant.ts';
import { ORDER_AT, paidOrders } from '../support/orders.ts';
import { capturedLogger } from '../support/logs.ts';

test('the logger redacts passwords, keys, signatures, IC and phone numbers', () => {
  const { logger, lines } = capturedLogger('info');
  logger.info(
    {
      req: { headers: { 'x-api-password': 'p4ss-secret', authorization: 'Bearer tok-secret' } },
      password: 'pw-secret',
      signature: 'sig-secret',
      apiKey: 'key-secret',
      record: { zakat_ic_no: '850312105432', zakat_phone: '0123456789', name: 'kept' },
      batch: { record: { data: { zakat_ic_no: '900614105672', zakat_phone: '0198765432' } } },
      normalised: { icNo: '880101105555' },
    },
    'something',
  );
  const out = lines.join('');
  for (const secret of [
    '900614105672',
    '0198765432',
    '880101105555',
    'p4ss-secret',
    'tok-secret',
    'pw-secret',
    'sig-secret',
    'key-secret',
    '850312105432',
    '0123456789',
  ]) {
    assert.ok(!out.includes(secret), `${secret} leaked: ${out}`);
  }
  assert.match(out, /kept/);
  assert.match(out, /\[redacted\]/);
});

test('a request logs one line with its request id, and never the password or the body', async (t) => {
  const app = await startApp(t);
  const record = bankRecord();
  const response = await app.postBatch({ transactions: [record] }, { 'x-request-id': 'trace-me-1' });
  assert.equal(response.status, 200);
  const logs = app.logs();
  const line = logs.split('\n').find((l) => l.includes('trace-me-1'));
  assert.ok(line, 'the request line carries the request id');
  const entry = JSON.parse(line) as { method: string; path: string; status: number };
  assert.deepEqual([entry.method, entry.path, entry.status], ['POST', '/api/bank/webhook', 200]);
  for (const secret of [
    DEMO_PASSWORD,
    record.data.zakat_ic_no ?? 'x',
    record.data.zakat_phone ?? 'x',
    record.orderno,
  ]) {
    assert.ok(!logs.includes(secret), `${secret} appears in the logs`);
  }
});

test("a request's line and what its handler logs both carry its request id, one line each", async (t) => {
  const { logger, lines } = capturedLogger('info');
  const app = new Koa<AppState>();
  app.use(requestContext(logger));
  app.use((ctx) => {
    if (ctx.path === '/noisy') ctx.state.log?.warn({ step: 'checked' }, 'handler says');
    ctx.body = 'ok';
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (const [path, id] of [
    ['/quiet', 'quiet-1'],
    ['/noisy', 'noisy-1'],
  ] as const) {
    const res = await fetch(`${base}${path}`, { headers: { 'x-request-id': id } });
    assert.equal(res.headers.get('x-request-id'), id);
    await res.text();
  }
  const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    entries.map((e) => [e.request_id, e.msg]),
    [
      ['quiet-1', 'request'],
      ['noisy-1', 'handler says'],
      ['noisy-1', 'request'],
    ],
  );
  // The request line has one shape, whether or not its handler logged.
  for (const line of entries.filter((e) => e.msg === 'request')) {
    assert.deepEqual(Object.keys(line), [
      'level',
      'time',
      'request_id',
      'method',
      'path',
      'status',
      'ms',
      'msg',
    ]);
    assert.equal(line.status, 200);
  }
  assert.equal(entries[1]?.step, 'checked');
});

test('a request line goes without redaction, but what its handler logs is redacted, and no line is written above info', async (t) => {
  const serve = async (level: string) => {
    const { logger, lines } = capturedLogger(level);
    const app = new Koa<AppState>();
    app.use(requestContext(logger));
    app.use((ctx) => {
      ctx.state.log?.warn(
        { password: 'pw-secret', order: { apiKey: 'key-secret', zakat_phone: '0123456789' } },
        'handler says',
      );
      ctx.body = 'ok';
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => server.close());
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/checkout`, {
      headers: { 'x-request-id': 'redact-1' },
    });
    await res.text();
    return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  const info = await serve('info');
  assert.deepEqual(
    info.map((e) => e.msg),
    ['handler says', 'request'],
  );
  const [handler, line] = info;
  assert.equal(handler?.password, '[redacted]');
  assert.deepEqual(handler?.order, { apiKey: '[redacted]', zakat_phone: '[redacted]' });
  assert.equal(handler?.request_id, 'redact-1');
  assert.deepEqual(line && [line.request_id, line.method, line.path, line.status], [
    'redact-1',
    'GET',
    '/v2/checkout',
    200,
  ]);
  const warn = await serve('warn');
  assert.deepEqual(
    warn.map((e) => e.msg),
    ['handler says'],
    'at warn, the handler speaks and the request line is not written',
  );
});

test('a callback attempt logs one line of scalars, none of them named by a redaction path (it is written without redaction)', async (t) => {
  const app = await startApp(t);
  // The first callback refused (500), the second acknowledged.
  const merchant = await startMerchant(t, (_form, nth) => (nth === 0 ? 500 : 200));
  await paidOrders(app.deps.store.orders, `${merchant.url}/callback`, 2, ORDER_AT, 'LOGCB');
  await createInProcessRuntime(app.deps, { pollMs: 10 }).drain();
  const lines = app
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((e) => e.msg === 'callback delivered' || e.msg === 'callback not acknowledged');
  assert.deepEqual(lines.map((e) => e.msg).sort(), ['callback delivered', 'callback not acknowledged']);
  // What the redaction paths name, at any depth: the last segment of each path.
  const redactedNames = new Set(REDACT_PATHS.map((p) => p.replace(/^.*[.[]"?|"?\]$/g, '')));
  for (const line of lines) {
    for (const [key, value] of Object.entries(line)) {
      assert.ok(value === null || typeof value !== 'object', `${key} is a scalar in ${JSON.stringify(line)}`);
      assert.ok(!redactedNames.has(key), `${key} is not a name redaction covers`);
    }
  }
  assert.equal(lines.find((e) => e.msg === 'callback not acknowledged')?.http_status, 500);
});
