import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { runReconciliation } from '../../pipeline/recon/run-day.ts';
import { loadSchemaFiles } from '../../schemas/index.ts';
import { reportToken } from '../helpers.ts';
import { AS_OF, DAY, generateDay } from '../support/recon-day.ts';
import { drainPipeline, loadDay } from '../support/recon-load.ts';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

interface OpenApi {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: {
          name: string;
          in: string;
          required?: boolean;
          description?: string;
          schema: unknown;
        }[];
        responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
      }
    >
  >;
  components: { schemas: Record<string, unknown> };
}

/** Each report route, its query schema file (if it has one) and its response schema file. */
const ROUTES = [
  ['/api/report/v1/payment', 'queries/payment-report-query.json', 'responses/payment-report.json'],
  ['/api/report/v1/fpxrequest', 'queries/order-query.json', 'responses/order-report.json'],
  ['/api/user/v1/transactions', 'queries/payer-transactions-query.json', 'responses/payer-transactions.json'],
  ['/api/report/v1/zakat', 'queries/zakat-report-query.json', 'responses/zakat-report.json'],
  ['/api/report/v1/reconciliation', 'queries/reconciliation-runs-query.json', 'reconciliation-runs.json'],
  ['/api/version', undefined, 'responses/version.json'],
  ['/api/echo', undefined, 'responses/echo.json'],
] as const;

/** The authentication parameters of a signed GET: the auth's, not the query's. */
const SIGNED_GET = ['exp', 'signature'];

test('the OpenAPI query parameters of the report routes are the properties of their schema files', async (t) => {
  const app = await loadDay(t, generateDay(2));
  const doc = (await (await fetch(`${app.url}/api/openapi.json`)).json()) as OpenApi;
  const files = loadSchemaFiles();
  for (const [route, queryFile, responseFile] of ROUTES) {
    const operation = doc.paths[route]?.get;
    assert.ok(operation, route);
    const response = files.get(responseFile);
    assert.ok(response, responseFile);
    assert.equal(
      operation.responses['200']?.content?.['application/json']?.schema?.$ref,
      `#/components/schemas/${response.title}`,
      `${route}: its 200 is the component of ${responseFile}`,
    );
    if (queryFile === undefined) continue;
    const query = files.get(queryFile);
    assert.ok(query, queryFile);
    const properties = query.properties as Record<string, Record<string, unknown>>;
    const own = (operation.parameters ?? []).filter((p) => !SIGNED_GET.includes(p.name));
    assert.deepEqual(
      own.map((p) => p.name),
      Object.keys(properties),
      `${route}: one parameter per property of ${queryFile}, in its order`,
    );
    for (const parameter of own) {
      const { description, ...rule } = properties[parameter.name] ?? {};
      assert.equal(parameter.in, 'query');
      assert.deepEqual(parameter.schema, rule, `${route} ${parameter.name}: the file's rule`);
      assert.equal(parameter.description, description, `${route} ${parameter.name}: the file's words`);
    }
  }
  // Required of the client: only what has no default (the zakat report's days default to today).
  const requiredOf = (route: string) =>
    (doc.paths[route]?.get?.parameters ?? []).filter((p) => p.required === true).map((p) => p.name);
  assert.deepEqual(requiredOf('/api/report/v1/zakat'), []);
  assert.deepEqual(requiredOf('/api/report/v1/payment'), []);
  assert.deepEqual(requiredOf('/api/user/v1/transactions'), ['email']);
});

test('the report responses validate against their schema files, paged and streamed', async (t) => {
  const generated = generateDay(20);
  const app = await loadDay(t, generated);
  await drainPipeline(app);
  await runReconciliation(app.deps, { sink: 'LZS', day: DAY, trigger: 'manual', asOf: AS_OF });
  const auth = { authorization: `Bearer ${await reportToken(app, ['LZS', 'PPZ'], AS_OF)}` };
  const ajv = new Ajv2020({ strict: true, verbose: true });
  ajv.addVocabulary(['x-message', 'x-detail']);
  addFormats(ajv);
  for (const schema of loadSchemaFiles().values()) ajv.addSchema(schema);

  const order = generated.checkout.find((plan) => plan.results.length > 0);
  assert.ok(order, 'the day has a settled order');
  const calls: [string, string][] = [
    [`/api/report/v1/payment?start=${DAY}&end=${DAY}&items=5`, 'responses/payment-report.json'],
    [`/api/report/v1/payment?start=${DAY}&end=${DAY}&items=-1`, 'responses/payment-report.json'],
    [`/api/report/v1/fpxrequest?fpx_seller_order_no=${order.orderNo}`, 'responses/order-report.json'],
    [
      `/api/user/v1/transactions?email=${order.orderNo.toLowerCase()}@example.my`,
      'responses/payer-transactions.json',
    ],
    [`/api/report/v1/zakat?start=${DAY}&items=5`, 'responses/zakat-report.json'],
    [`/api/report/v1/zakat?start=${DAY}&items=-1`, 'responses/zakat-report.json'],
    ['/api/report/v1/reconciliation?agency=LZS', 'reconciliation-runs.json'],
    ['/api/version', 'responses/version.json'],
    ['/api/echo?ping=1&agency=LZS', 'responses/echo.json'],
  ];
  for (const [pathAndQuery, file] of calls) {
    const response = await fetch(`${app.url}${pathAndQuery}`, { headers: auth });
    assert.equal(response.status, 200, `${pathAndQuery}: ${await response.clone().text()}`);
    const body = (await response.json()) as { data?: unknown[] };
    // An empty answer would validate against anything: each report answers with rows.
    if (Array.isArray(body.data)) assert.ok(body.data.length > 0, `${pathAndQuery} has rows`);
    const validate = ajv.getSchema(`https://schemas.amil.my/${file}`);
    assert.ok(validate, file);
    assert.equal(validate(body), true, `${pathAndQuery}: ${JSON.stringify(validate.errors)}`);
  }
});

test('a payer history asked for with something that is not an e-mail address is 400 naming /email', async (t) => {
  const app = await loadDay(t, generateDay(2));
  const auth = { authorization: `Bearer ${await reportToken(app, ['LZS'], AS_OF)}` };
  for (const email of ['aisyah@example', 'aisyah', '']) {
    const response = await fetch(`${app.url}/api/user/v1/transactions?email=${email}`, { headers: auth });
    assert.equal(response.status, 400, email);
    const problem = (await response.json()) as { detail: string; errors: { pointer: string }[] };
    assert.equal(problem.detail, 'Give the payer email.');
    assert.deepEqual(
      problem.errors.map((e) => e.pointer),
      ['/email'],
    );
  }
});
