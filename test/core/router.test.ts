import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { createRouter } from '../../core/http/router.ts';
import type { AppState } from '../../core/http/state.ts';

/** A real app over the router of core/http, with routes of several first segments, as the hosts have. */
async function serve(t: TestContext) {
  const router = createRouter();
  router.get('/v2/checkout/:orderNo', (ctx) => {
    ctx.body = `page ${ctx.params.orderNo}`;
  });
  router.post('/v2/checkout', (ctx) => {
    ctx.body = 'posted';
  });
  router.get('/api/version', (ctx) => {
    ctx.body = 'version';
  });
  router.post('/api/bank/webhook', (ctx) => {
    ctx.body = 'webhook';
  });
  router.get('/', (ctx) => {
    ctx.body = 'front door';
  });
  const nested = new Router<AppState>({ prefix: '/dashboard' });
  nested.get('/login', (ctx) => {
    ctx.body = 'login';
  });
  router.use(nested.routes(), nested.allowedMethods());
  const app = new Koa<AppState>();
  app.use(router.routes());
  app.use(router.allowedMethods());
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (path: string, method = 'GET') => {
    const res = await fetch(`${base}${path}`, { method });
    return { status: res.status, allow: res.headers.get('allow'), body: await res.text() };
  };
  return { router, call };
}

test('the router finds each route by its first segment, with its parameters, in any letter case', async (t) => {
  const { call } = await serve(t);
  assert.deepEqual(await call('/v2/checkout/ORD-1'), { status: 200, allow: null, body: 'page ORD-1' });
  assert.equal((await call('/V2/Checkout/ORD-2')).body, 'page ORD-2', 'routes are case-insensitive');
  assert.equal((await call('/v2/checkout/ORD-3/')).body, 'page ORD-3', 'a trailing slash');
  assert.equal((await call('/v2/checkout', 'POST')).body, 'posted');
  assert.equal((await call('/api/version')).body, 'version');
  assert.equal((await call('/')).body, 'front door');
  assert.equal((await call('/dashboard/login')).body, 'login', "a nested router's route");
});

test('the router answers 404 for an unknown path and 405 with the Allow header of the path it knows', async (t) => {
  const { call } = await serve(t);
  assert.equal((await call('/nowhere')).status, 404);
  assert.equal((await call('/v2/nowhere')).status, 404);
  assert.equal((await call('/v3/checkout')).status, 404);
  const get = await call('/api/bank/webhook');
  assert.equal(get.status, 405);
  assert.match(get.allow ?? '', /POST/);
  const put = await call('/v2/checkout', 'PUT');
  assert.equal(put.status, 405);
  assert.match(put.allow ?? '', /POST/);
  assert.equal((await call('/dashboard/login', 'DELETE')).status, 405, "a nested router's 405");
});

test("a request tests only its first segment's routes and the layers any path may match", async (t) => {
  const { router, call } = await serve(t);
  const tested: string[] = [];
  for (const layer of router.stack) {
    const match = layer.match.bind(layer);
    layer.match = (path: string) => {
      tested.push(String(layer.path));
      return match(path);
    };
  }
  assert.equal((await call('/v2/checkout/ORD-4')).status, 200);
  assert.ok(tested.includes('/v2/checkout/:orderNo'));
  for (const other of ['/api/version', '/api/bank/webhook']) {
    assert.ok(!tested.includes(other), `${other} was tested for a /v2/ path`);
  }
  assert.ok(tested.length < router.stack.length, `${tested.length} of ${router.stack.length} tested`);
});

test('a route added after the first request is found by the next one', async (t) => {
  const { router, call } = await serve(t);
  assert.equal((await call('/later')).status, 404);
  router.get('/later', (ctx) => {
    ctx.body = 'later';
  });
  assert.equal((await call('/later')).body, 'later');
});
