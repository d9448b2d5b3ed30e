import { configuredSchemas, type JsonSchema, type SchemaSettings } from './index.ts';
import { checkoutPaths } from './openapi-checkout.ts';
import { reconciliationPaths } from './openapi-reconciliation.ts';
import { qrPaths } from './openapi-qr.ts';
import {
  busy,
  hostServer,
  problemResponse,
  signedGetParams,
  tooManyRequests,
  withPerClientLimits,
  type Json,
} from './openapi-parts.ts';

/** The endpoints, host by host. Each later capability adds its paths here, referencing schemas/ files. */
/** The body of a 200 from a health probe. */
const okSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok'] } },
};

function paths(settings: OpenApiSettings): Json {
  return {
    ...withPerClientLimits(checkoutPaths()),
    ...reconciliationPaths(),
    ...qrPaths(),
    '/api/bank/webhook': {
      servers: hostServer('pay_url'),
      post: {
        operationId: 'postBankWebhook',
        tags: ['Bank webhook'],
        summary: 'A batch of zakat postings from the partner bank',
        description: [
          'The batch is judged as a whole for its form and record by record for its business outcome.',
          'A 200 is sent only after the whole batch is durably committed; any 4xx or 5xx means nothing of it was stored.',
          `At most ${settings.maxRecords} records and ${settings.maxBodyBytes} bytes per request (413 beyond).`,
          'Records apply in order: the same orderno twice in one batch is judged against the first.',
        ].join(' '),
        security: [{ partnerPassword: [] }],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/BankWebhookRequest' } } },
        },
        responses: {
          '200': {
            description: 'Committed. One outcome per record: accepted, duplicate, updated or conflict.',
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/BankWebhookResponse' } },
            },
          },
          '400': problemResponse('The body is not valid JSON (or not UTF-8). Nothing stored.'),
          '401': problemResponse('X-API-Password missing or wrong.'),
          '413': problemResponse(
            'Body over the byte limit, or more records than the record limit. Nothing stored.',
          ),
          '415': problemResponse('Content-Type is not application/json. Nothing stored.'),
          '422': problemResponse(
            'Some record breaks the schema, or a record time is outside the accepted window: the first 100 problems (errors_truncated when there are more), each with its record index, orderno and JSON pointer. Nothing stored.',
          ),
          '429': tooManyRequests(
            'This client sent too many wrong passwords (PARTNER_AUTH_MAX_FAILURES per PARTNER_AUTH_WINDOW_SECONDS); checked before the password. A password already verified is never refused so.',
          ),
          '500': problemResponse('Unexpected failure; nothing of the batch was stored. Safe to retry.'),
          '503': busy('Too many password checks are waiting; retry after Retry-After.'),
        },
      },
    },
    '/api/report/v1/payment': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getPaymentReport',
        tags: ['Reports'],
        summary:
          "An agency's payments, or a token's agencies combined (spec 2.3 envelope); bearer token or signed GET",
        description:
          'Paging: iterate page from 0 until a page has fewer rows than items. start/end are UTC+8 calendar days on created_date (default: all). A bearer token without agency gets the rows of every agency it covers, in one order (created_date, then fpx_seller_order_no), each row naming its agency. Rows: fpx_seller_order_no, created_date (UTC+8, YYYY-MM-DD HH:mm:ss), is_approved, fpx_debit_auth_code, refNo, extraData, amount, addCharge, status, payment_method, email, fpx_txn_id, fpx_txn_time, agency.',
        security: [{ reportToken: [] }, { signedRequest: [] }],
        parameters: [
          {
            name: 'agency',
            in: 'query',
            schema: { type: 'string' },
            description:
              'Required with a signed GET. With a bearer token: one of its agencies; without it, all of them combined.',
          },
          { name: 'output', in: 'query', schema: { type: 'string', enum: ['json'] } },
          {
            name: 'items',
            in: 'query',
            schema: { type: 'integer', minimum: -1, maximum: 10000, default: 100 },
          },
          { name: 'page', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } },
          { name: 'seller_order_no', in: 'query', schema: { type: 'string' } },
          { name: 'start', in: 'query', schema: { type: 'string', format: 'date' } },
          { name: 'end', in: 'query', schema: { type: 'string', format: 'date' } },
          { name: 'is_approved', in: 'query', schema: { type: 'string', enum: ['0', '1'] } },
        ],
        responses: {
          '200': {
            description:
              '{ status: OK, data: [payment rows], stats: { total_pages, total_rows, page, items } }',
            content: { 'application/json': {} },
          },
          '400': problemResponse('A bad query, or a repeated key.'),
          '401': problemResponse('No, expired, revoked or wrong credentials.'),
          '403': problemResponse('The credentials do not cover this agency.'),
        },
      },
    },
    '/api/report/v1/fpxrequest': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getOrder',
        tags: ['Reports'],
        summary: 'One order by fpx_seller_order_no or refno, with its status history',
        security: [{ reportToken: [] }, { signedRequest: [] }],
        parameters: [
          { name: 'fpx_seller_order_no', in: 'query', schema: { type: 'string' } },
          {
            name: 'refno',
            in: 'query',
            schema: { type: 'string' },
            description: 'With agency when a token covers several.',
          },
        ],
        responses: {
          '200': {
            description: '{ status: OK, data: payment row + history[] }',
            content: { 'application/json': {} },
          },
          '401': problemResponse('Credentials missing or wrong.'),
          '404': problemResponse('No such order among the agencies the credentials cover.'),
        },
      },
    },
    '/api/user/v1/transactions': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getPayerTransactions',
        tags: ['Reports'],
        summary:
          "A payer's payments by email, only within the caller's agencies (personal data: auth required)",
        security: [{ reportToken: [] }, { signedRequest: [] }],
        parameters: [
          { name: 'email', in: 'query', required: true, schema: { type: 'string', format: 'email' } },
        ],
        responses: {
          '200': { description: '{ status: OK, data: [payment rows] }', content: { 'application/json': {} } },
          '400': problemResponse('No email.'),
          '401': problemResponse('Credentials missing or wrong.'),
        },
      },
    },
    '/api/report/v1/zakat': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getZakatReport',
        tags: ['Reports'],
        summary:
          "An agency's bank postings (or a token's agencies combined) for a business day or range, with exception codes",
        description:
          'Authenticate with Authorization: Bearer <report token>, or sign the GET with the agency API key (docs/signatures.md; agency, exp and signature in the query). A bearer token without agency gets the postings of every agency it covers, in posting order, each row naming its agency. Rows appear once the pipeline has normalised them; every field of the bank record (spec 2.5) is shown, null when the bank did not send it. Paging: iterate page from 0 until a page has fewer rows than items.',
        security: [{ reportToken: [] }, { signedRequest: [] }],
        parameters: [
          {
            name: 'agency',
            in: 'query',
            schema: { type: 'string' },
            description:
              'Required with a signed GET. With a bearer token: one of its agencies; without it, all of them combined.',
          },
          {
            name: 'start',
            in: 'query',
            schema: { type: 'string', format: 'date' },
            description: 'First business day (UTC+8); default today.',
          },
          {
            name: 'end',
            in: 'query',
            schema: { type: 'string', format: 'date' },
            description: 'Last business day; default start.',
          },
          {
            name: 'items',
            in: 'query',
            schema: { type: 'integer', minimum: -1, maximum: 10000, default: 100 },
            description: 'Page size; -1 = every row.',
          },
          { name: 'page', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } },
          ...signedGetParams,
        ],
        responses: {
          '200': {
            description: 'The envelope of spec 2.3',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['status', 'data', 'stats'],
                  properties: {
                    status: { type: 'string', enum: ['OK'] },
                    data: {
                      type: 'array',
                      items: {
                        type: 'object',
                        properties: {
                          orderno: { type: 'string' },
                          created_date: { type: 'string', description: 'UTC+8, YYYY-MM-DD HH:mm:ss' },
                          business_date: { type: 'string', format: 'date' },
                          status: { type: 'string', enum: ['success', 'pending', 'failed'] },
                          amount: { type: 'string', description: 'Ringgit, two decimals' },
                          name: { type: 'string' },
                          email: { type: 'string', description: 'The transaction e-mail, lower-case' },
                          data_email: {
                            type: ['string', 'null'],
                            description: 'The bank record data.email, lower-case (may differ from email)',
                          },
                          zakat_name: { type: ['string', 'null'] },
                          zakat_ic_no: { type: ['string', 'null'] },
                          zakat_phone: { type: ['string', 'null'] },
                          zakat_address: { type: ['string', 'null'] },
                          zakat_postcode: { type: ['string', 'null'] },
                          zakat_city: { type: ['string', 'null'] },
                          zakat_state: { type: ['string', 'null'] },
                          zakat_type: {
                            type: ['string', 'null'],
                            description: 'Canonical (zakat_fitrah is fitrah)',
                          },
                          zakat_type_raw: { type: ['string', 'null'] },
                          zakat_year: { type: ['string', 'null'] },
                          zakat_amount: {
                            type: ['string', 'null'],
                            description: 'data.zakat_amount in ringgit, two decimals',
                          },
                          zakat_rate: { type: ['string', 'null'], description: 'Ringgit, two decimals' },
                          zakat_dependant: { type: ['integer', 'null'] },
                          exceptions: {
                            type: 'array',
                            items: { type: 'string' },
                            description: 'docs/exceptions.md',
                          },
                          agency: { type: 'string', description: 'The agency whose posting it is' },
                        },
                      },
                    },
                    stats: {
                      type: 'object',
                      properties: {
                        total_pages: { type: 'integer' },
                        total_rows: { type: 'integer' },
                        page: { type: 'integer' },
                        items: { type: 'integer' },
                      },
                    },
                  },
                },
              },
            },
          },
          '400': problemResponse('A bad query (each problem with its pointer), or a repeated key.'),
          '401': problemResponse('No, expired, revoked or wrong credentials; the problem type says which.'),
          '403': problemResponse('The credentials do not cover this agency.'),
        },
      },
    },
    '/api/version': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getVersion',
        tags: ['Service'],
        summary: 'Connectivity check: version, commit and start time (no auth)',
        responses: {
          '200': {
            description: '{ name, version, commit, started_at, api }',
            content: { 'application/json': {} },
          },
        },
      },
    },
    '/api/echo': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getEcho',
        tags: ['Service'],
        summary: 'Connectivity check: echoes the query, with the time and request id (no auth)',
        responses: {
          '200': {
            description: '{ status: OK, time, request_id, query }',
            content: { 'application/json': {} },
          },
        },
      },
    },
    '/admin/queues': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getQueueBoard',
        tags: ['Operations'],
        summary: 'Bull Board: the pipeline queues (Redis mode only; read-only unless QUEUE_BOARD_WRITABLE)',
        description:
          'An operator UI (HTML) with its JSON API under /admin/queues/api. User `admin`, password ADMIN_PASSWORD. Job data shows ids only.',
        security: [{ adminBasic: [] }],
        responses: {
          '200': { description: 'The board', content: { 'text/html': {} } },
          '401': problemResponse('Missing or wrong admin credentials.'),
        },
      },
    },
    '/api/openapi.json': {
      get: {
        operationId: 'getOpenApi',
        tags: ['Service'],
        summary: 'This document',
        responses: {
          '200': { description: 'The OpenAPI 3.1 document', content: { 'application/json': {} } },
        },
      },
    },
    '/health/live': {
      get: {
        operationId: 'getLiveness',
        tags: ['Service'],
        summary: 'Liveness (every host): the process runs and answers; touches no dependency',
        responses: { '200': { description: 'Alive', content: { 'application/json': { schema: okSchema } } } },
      },
    },
    '/health/ready': {
      get: {
        operationId: 'getReadiness',
        tags: ['Service'],
        summary:
          'Readiness (every host): the store commits a write, Redis answers (Redis mode); what a load balancer probes',
        responses: {
          '200': { description: 'Ready', content: { 'application/json': { schema: okSchema } } },
          '503': problemResponse(
            'Not ready: errors[] names each failing dependency (/checks/store, /checks/redis), or the process is shutting down.',
          ),
        },
      },
    },
    '/health': {
      get: {
        operationId: 'getHealth',
        tags: ['Service'],
        summary: 'Readiness under its old name (every host); the same as /health/ready',
        responses: {
          '200': { description: 'Ready', content: { 'application/json': { schema: okSchema } } },
          '503': problemResponse('Not ready, as /health/ready.'),
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'getMetrics',
        tags: ['Service'],
        summary:
          'Prometheus metrics of this process (every host), behind the admin password; docs/operations.md',
        security: [{ adminBasic: [] }],
        responses: {
          '200': {
            description: 'The Prometheus text format',
            content: { 'text/plain; version=0.0.4; charset=utf-8': {} },
          },
          '401': problemResponse('Missing or wrong admin credentials.'),
          '404': problemResponse('No ADMIN_PASSWORD is set: there are no metrics to serve.'),
        },
      },
    },
  };
}

export interface OpenApiSettings extends SchemaSettings {
  version: string;
  maxRecords: number;
  maxBodyBytes: number;
}

/** The OpenAPI 3.1 document, built from the schema files with the configured values applied. */
export function buildOpenApi(settings: OpenApiSettings): Json {
  const schemas = configuredSchemas(settings);
  const nameOf = new Map<string, string>();
  for (const [file, schema] of schemas) {
    nameOf.set(file, schema.title);
    nameOf.set(schema.$id, schema.title);
  }
  const components: Record<string, unknown> = {};
  for (const [file, schema] of schemas) {
    // The job payloads (schemas/jobs/) never cross HTTP: they are the pipeline's, not the interface's.
    if (!file.startsWith('jobs/')) components[schema.title] = toComponent(schema, nameOf);
  }

  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'amil',
      version: settings.version,
      description:
        'Payment gateway and zakat reconciliation service. Errors are application/problem+json (RFC 9457); see docs/errors.md.',
    },
    paths: paths(settings),
    components: {
      schemas: components,
      securitySchemes: {
        reportToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'amil token mint' },
        signedRequest: {
          type: 'apiKey',
          in: 'query',
          name: 'signature',
          description:
            'HMAC of the request with the agency API key (docs/signatures.md); with agency and exp.',
        },
        adminBasic: { type: 'http', scheme: 'basic', description: 'User admin, password ADMIN_PASSWORD.' },
        partnerPassword: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Password',
          description: 'Password issued to the integrating bank partner (amil partner set-password).',
        },
      },
    },
  };
}

/** A schema file as an OpenAPI component: no $id/$schema, references rewritten to components. */
function toComponent(schema: JsonSchema, nameOf: Map<string, string>): unknown {
  const { $id: _id, $schema: _schema, ...rest } = schema;
  return rewriteRefs(rest, nameOf);
}

function rewriteRefs(node: unknown, nameOf: Map<string, string>): unknown {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, nameOf));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && nameOf.has(value)) {
      out[key] = `#/components/schemas/${nameOf.get(value)}`;
    } else {
      out[key] = rewriteRefs(value, nameOf);
    }
  }
  return out;
}
