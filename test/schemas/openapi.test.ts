import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { startApp } from '../helpers.ts';
import { createWebApp } from '../../bin/create-app.ts';
import { signPost } from '../../core/signatures.ts';
import { LZS_KEY } from '../support/merchant.ts';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

interface OpenApi {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, unknown> };
}

test('GET /api/openapi.json documents every route, with resolvable references', async (t) => {
  const app = await startApp(t, { BANK_AGENCY_ROUTES: 'BANKLZS=LZS,BANK=test' });
  const response = await fetch(`${app.url}/api/openapi.json`);
  assert.equal(response.status, 200);
  const doc = (await response.json()) as OpenApi;
  assert.equal(doc.openapi, '3.1.0');

  const webhook = doc.paths['/api/bank/webhook']?.post;
  assert.ok(webhook);
  assert.deepEqual(Object.keys(webhook.responses).sort(), [
    '200',
    '400',
    '401',
    '413',
    '415',
    '422',
    '429',
    '500',
    '503',
  ]);
  // The anonymous pages say they may answer 429; the signed generators do not.
  assert.ok(doc.paths['/qr2/']?.get?.responses['429']);
  assert.ok(doc.paths['/pay/{agency}/{paymentCategory}/{refNo}/{amount}']?.post?.responses['429']);
  assert.equal(doc.paths['/assets/{name}']?.get?.responses['429'], undefined);
  for (const route of ['/api/openapi.json', '/health']) assert.ok(doc.paths[route]?.get, route);

  // Every $ref points at a component that exists.
  const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
  assert.ok(refs.length > 0);
  for (const ref of refs) {
    const name = /#\/components\/schemas\/(\w+)"/.exec(ref)?.[1];
    assert.ok(name && doc.components.schemas[name], ref);
  }

  // The configured agency codes, not the defaults, are what the document promises.
  const transaction = doc.components.schemas.BankTransaction as {
    properties: { agency: { enum: string[] } };
  };
  assert.deepEqual(transaction.properties.agency.enum, ['BANKLZS', 'BANK']);

  // The components compile as JSON Schema 2020-12 and validate a real response.
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const validate = ajv.compile({ $ref: 'doc#/components/schemas/BankWebhookResponse' });
  const posted = await app.postBatch(
    '{"transactions":[{"agency":"BANK","orderno":"X1","amount":1,"name":"T","email":"t@example.my","time":"2026-11-20T10:00:00+08:00","status":"success","data":{}}]}',
  );
  assert.equal(validate(await posted.json()), true, JSON.stringify(validate.errors));
});

test('every route the web app serves is in the OpenAPI document, with its method', async (t) => {
  const app = await startApp(t);
  const doc = (await (await fetch(`${app.url}/api/openapi.json`)).json()) as OpenApi;
  const web = createWebApp(app.deps, ['base', 'reports', 'pay']);
  // @koa/router marks its dispatch middleware with the router itself.
  const router = web.middleware
    .map((m) => (m as { router?: { stack: { path: string; methods: string[] }[] } }).router)
    .find((r) => r !== undefined);
  assert.ok(router, 'the router is mounted');
  const served = router.stack.flatMap((layer) =>
    layer.methods
      .filter((m) => m !== 'HEAD')
      .map((m) => `${m.toLowerCase()} ${layer.path.replace(/:(\w+)/g, '{$1}')}`),
  );
  assert.ok(served.length > 10);
  // The merchant dashboard's pages are for browsers, not an API: listed in the README, not in the document.
  const dashboard = served.filter((route) => route.split(' ')[1]?.startsWith('/dashboard'));
  assert.ok(dashboard.length > 3, 'the dashboard is served');
  assert.deepEqual(
    Object.keys(doc.paths).filter((path) => path.startsWith('/dashboard')),
    [],
    'and is not in the OpenAPI document',
  );
  for (const route of served.filter((r) => !dashboard.includes(r))) {
    const [method = '', path = ''] = route.split(' ');
    assert.ok(doc.paths[path]?.[method], `${route} is not documented`);
  }
});

test('the QR generators answer as their OpenAPI components say', async (t) => {
  const app = await startApp(t);
  const doc = (await (await fetch(`${app.url}/api/openapi.json`)).json()) as OpenApi;
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  for (const [path, component] of [
    ['/api/qrcode/v1/generator', 'QrCodeResponse'],
    ['/api/duitnowqr/v1/generator', 'DuitNowQrResponse'],
  ] as const) {
    assert.ok(doc.paths[path]?.post?.responses['201'], path);
    const { body } = signPost(
      { agency: 'LZS', paymentCategory: 'zakat-fitrah', refNo: 'R-1', amount: '10.00' },
      LZS_KEY,
    );
    const res = await fetch(`${app.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    assert.equal(res.status, 201, path);
    const validate = ajv.compile({ $ref: `doc#/components/schemas/${component}` });
    assert.equal(validate(await res.json()), true, `${path}: ${JSON.stringify(validate.errors)}`);
  }
});

test('a merchant’s order answers (opened, resumed, back from the bank) are the JSON the document describes', async (t) => {
  const app = await startApp(t);
  const doc = (await (await fetch(`${app.url}/api/openapi.json`)).json()) as OpenApi;
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  ajv.addSchema({ $id: 'doc', ...doc });
  /** The document's JSON schema of that answer, compiled: none means the document does not describe it. */
  const schemaOf = (path: string, method: string, status: number) => {
    const response = doc.paths[path]?.[method]?.responses[String(status)] as
      { content?: Record<string, { schema?: unknown }> } | undefined;
    const schema = response?.content?.['application/json']?.schema;
    assert.ok(schema, `${method.toUpperCase()} ${path} ${status} documents its JSON`);
    const pointer = `/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}/responses/${status}/content/application~1json/schema`;
    return ajv.getSchema(`doc#${pointer}`) ?? assert.fail('the schema compiles');
  };
  const post = () =>
    fetch(`${app.url}/v2/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: signPost(
        {
          agency: 'LZS',
          refNo: 'INV-OPENAPI',
          amount: '10.00',
          email: 'ali@example.my',
          returnUrl: 'http://127.0.0.1:4000/return',
        },
        LZS_KEY,
      ).body,
    });
  const answers: [string, string, Response][] = [['/v2/checkout', 'post', await post()]];
  answers.push(['/v2/checkout', 'post', await post()]);
  const opened = (await answers[0]![2].clone().json()) as { checkoutUrl: string };
  const back = new URL(opened.checkoutUrl, app.url);
  back.pathname += '/return';
  answers.push([
    '/v2/checkout/{orderNo}/return',
    'get',
    await fetch(back, { headers: { accept: 'application/json' } }),
  ]);
  assert.deepEqual(
    answers.map(([, , res]) => res.status),
    [201, 200, 200],
  );
  for (const [path, method, res] of answers) {
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const validate = schemaOf(path, method, res.status);
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(validate(body), true, `${path} ${res.status}: ${JSON.stringify(validate.errors)}`);
    // The schema holds the merchant to something: the URL to send the payer to cannot be missing.
    const { checkoutUrl: _dropped, ...withoutUrl } = body;
    assert.equal(validate(withoutUrl), false, `${path} ${res.status} requires checkoutUrl`);
  }
});
