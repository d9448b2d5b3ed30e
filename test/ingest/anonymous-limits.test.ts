/** Per-client limits on the anonymous endpoints of {base_url} (issue 12, item 8). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { problemOf, startApp, type TestApp } from '../helpers.ts';
import { startRedis } from '../support/redis.ts';
import { postOrder } from '../support/merchant.ts';

// TRUST_PROXY lets a test speak for several clients through X-Forwarded-For, as a reverse proxy would.
const LIMITED = { TRUST_PROXY: 'true', RATE_LIMIT_PAGES_PER_MINUTE: '3', RATE_LIMIT_ORDERS_PER_MINUTE: '2' };

const payLink = (app: TestApp, refNo: string) => `${app.url}/pay/LZS/zakat-fitrah/${refNo}/28.00`;

const openPage = (url: string, client: string, accept = 'application/json') =>
  fetch(url, { headers: { accept, 'x-forwarded-for': client } });

const payForm = (url: string, client: string) =>
  fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      'x-forwarded-for': client,
    },
    body: 'email=siti%40example.my',
    redirect: 'manual',
  });

test('a client past its page limit gets 429 problem+json with Retry-After, and another client is unaffected', async (t) => {
  const app = await startApp(t, LIMITED);
  const link = payLink(app, 'R-1');
  for (let i = 0; i < 3; i += 1) assert.equal((await openPage(link, '203.0.113.7')).status, 200);
  const refused = await openPage(link, '203.0.113.7');
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('content-type'), 'application/problem+json');
  const retryAfter = Number(refused.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  assert.equal((await problemOf(refused)).type, 'https://docs.amil.my/problems/too-many-requests');
  // /qr2/ and the checkout pages count against the same budget.
  const qr = await openPage(`${app.url}/qr2/?q=${encodeURIComponent(link)}`, '203.0.113.7');
  assert.equal(qr.status, 429);

  assert.equal((await openPage(link, '198.51.100.9')).status, 200, 'another client is not limited');
  // The reports host is not an anonymous page: never limited by this budget.
  assert.equal((await openPage(`${app.url}/api/version`, '203.0.113.7')).status, 200);
});

test('a browser past the limit gets a readable 429 page with Retry-After', async (t) => {
  const app = await startApp(t, LIMITED);
  const link = payLink(app, 'R-2');
  for (let i = 0; i < 3; i += 1) await openPage(link, '203.0.113.8', 'text/html');
  const refused = await openPage(link, '203.0.113.8', 'text/html');
  assert.equal(refused.status, 429);
  assert.match(refused.headers.get('content-type') ?? '', /^text\/html/);
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  assert.match(await refused.text(), /Too many payments|Too many requests from your network/);
});

test('anonymous POST /pay/ past the order limit gets 429 and opens no order', async (t) => {
  const app = await startApp(t, { ...LIMITED, RATE_LIMIT_PAGES_PER_MINUTE: '1000' });
  const statuses: number[] = [];
  for (let i = 0; i < 5; i += 1)
    statuses.push((await payForm(payLink(app, `FLOOD-${i}`), '203.0.113.9')).status);
  assert.deepEqual(statuses, [303, 303, 429, 429, 429]);
  // Pay-link payments are orders of their own, found by their link's refNo among the agency's payments.
  assert.equal((await app.deps.store.paymentReport.find(['LZS'], { refNo: 'FLOOD-1' })).length, 1);
  assert.equal((await app.deps.store.paymentReport.find(['LZS'], { refNo: 'FLOOD-2' })).length, 0);
  assert.equal((await payForm(payLink(app, 'OTHER-1'), '198.51.100.10')).status, 303);
});

test('with REDIS_URL two web processes share one client budget through Redis', async (t) => {
  const redis = await startRedis(t);
  const env = { ...LIMITED, REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix };
  const first = await startApp(t, env);
  const second = await startApp(t, env);
  assert.equal((await openPage(payLink(first, 'S-1'), '203.0.113.10')).status, 200);
  assert.equal((await openPage(payLink(second, 'S-1'), '203.0.113.10')).status, 200);
  assert.equal((await openPage(payLink(first, 'S-1'), '203.0.113.10')).status, 200);
  assert.equal((await openPage(payLink(second, 'S-1'), '203.0.113.10')).status, 429, 'the 4th, on either');
});

test('when Redis is unreachable the pay page still answers, and each process limits clients in memory', async (t) => {
  const redis = await startRedis(t);
  const app = await startApp(t, { ...LIMITED, REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });
  assert.equal((await openPage(payLink(app, 'D-1'), '203.0.113.11')).status, 200);
  await redis.stop();
  const statuses: number[] = [];
  for (let i = 0; i < 4; i += 1) statuses.push((await openPage(payLink(app, 'D-1'), '203.0.113.12')).status);
  assert.deepEqual(statuses, [200, 200, 200, 429]);
});

test("unsigned POST /v2/checkout spends the order budget; a merchant's signed orders are never limited", async (t) => {
  const app = await startApp(t, { RATE_LIMIT_ORDERS_PER_MINUTE: '2' });
  await app.deps.store.agencies.update('LZS', { settings: { acceptUnsignedOrders: true } });
  const fields = (refNo: string) => ({
    agency: 'LZS',
    refNo,
    amount: '10.00',
    email: 'ali@example.my',
    returnUrl: 'http://127.0.0.1:9/return',
  });
  const unsigned: number[] = [];
  for (let i = 0; i < 3; i += 1)
    unsigned.push((await postOrder(app, fields(`U-${i}`), { sign: false })).status);
  assert.deepEqual(unsigned, [201, 201, 429]);
  assert.equal(await app.deps.store.orders.orderByRef('LZS', 'U-2'), undefined);
  for (let i = 0; i < 5; i += 1) assert.equal((await postOrder(app, fields(`S-${i}`))).status, 201);
});
