import { configuredSchemas, type JsonSchema, type SchemaSettings } from './index.ts';
import { checkoutPaths } from './openapi-checkout.ts';
import { reconciliationPaths } from './openapi-reconciliation.ts';
import { qrPaths } from './openapi-qr.ts';
import {
  busy,
  hostServer,
  problemResponse,
  tooManyRequests,
  withPerClientLimits,
  type Json,
  type SchemaFiles,
} from './openapi-parts.ts';
import { reportPaths } from './openapi-reports.ts';

/** The body of a 200 from a health probe. */
const okSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok'] } },
};

/** The endpoints, host by host. Each later capability adds its paths here, referencing schemas/ files. */
function paths(settings: OpenApiSettings, files: SchemaFiles): Json {
  return {
    ...withPerClientLimits(checkoutPaths()),
    ...reportPaths(files),
    ...reconciliationPaths(files),
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
          '503': busy(
            'Too many password checks are waiting, or the database could not take the batch just now (a lock held past the lock wait, disk full, session ended, a read-only standby, unreachable): nothing stored; send it again after Retry-After.',
          ),
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
    paths: paths(settings, schemas),
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
  const { $id, $schema: _schema, ...rest } = schema;
  return rewriteRefs(rest, nameOf, $id);
}

/** References to other files (relative to the file's $id, as ajv reads them) become component references. */
function rewriteRefs(node: unknown, nameOf: Map<string, string>, base: string): unknown {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, nameOf, base));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    const target = key === '$ref' && typeof value === 'string' ? new URL(value, base).href : undefined;
    if (target !== undefined && nameOf.has(target)) {
      out[key] = `#/components/schemas/${nameOf.get(target)}`;
    } else {
      out[key] = rewriteRefs(value, nameOf, base);
    }
  }
  return out;
}
