/** Building blocks of the OpenAPI document shared by its path files. */
import type { JsonSchema } from './index.ts';

export type Json = Record<string, unknown>;

/** The schema files by path in schemas/ (`queries/zakat-report-query.json`), as the document is built from. */
export type SchemaFiles = ReadonlyMap<string, JsonSchema>;

/**
 * The query parameters of a route, one per property of its query schema file (schemas/queries/), in the
 * file's order: what the validate() middleware checks is what the document says, never a copy by hand. A
 * property with a default is not required of the client, even where the checked value always has it.
 */
export function queryParameters(files: SchemaFiles, file: string): Json[] {
  const schema = files.get(file);
  if (!schema) throw new Error(`${file} is missing`);
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rule } = property;
    return {
      name,
      in: 'query',
      ...(required.has(name) && !('default' in property) && { required: true }),
      ...(typeof description === 'string' && { description }),
      schema: rule,
    };
  });
}

/** A 200 answer of JSON whose schema is a file's component, by the file's title. */
export function jsonResponse(files: SchemaFiles, file: string, description: string): Json {
  const schema = files.get(file);
  if (!schema) throw new Error(`${file} is missing`);
  return {
    description,
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema.title}` } } },
  };
}

export const problemResponse = (description: string): Json => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

const retryAfter: Json = {
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' } },
};

/** 429 too-many-requests: a per-client limit was reached (docs/decisions.md). */
export const tooManyRequests = (description: string): Json => ({
  ...problemResponse(description),
  headers: retryAfter,
});

/** 503 unavailable with Retry-After: the work this needs is saturated for a moment. */
export const busy = (description: string): Json => ({ ...problemResponse(description), headers: retryAfter });

/**
 * Adds the 429 of the per-client limits of the anonymous pages (ingest/anonymous-limits.ts) to every
 * operation of the given paths but the static files, the demo merchant and the front door; a browser gets
 * it as a page.
 */
export function withPerClientLimits(paths: Json): Json {
  const unlimited = ['/assets/', '/demo/', '/docs/', '/agency-logo/'];
  const limited = (path: string) => path !== '/' && !unlimited.some((prefix) => path.startsWith(prefix));
  const response = {
    ...tooManyRequests(
      'Too many requests from this client (RATE_LIMIT_PAGES_PER_MINUTE; opening orders anonymously: RATE_LIMIT_ORDERS_PER_MINUTE). A page for browsers.',
    ),
  };
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => {
      if (!limited(path)) return [path, item];
      const operations = Object.entries(item as Json).map(([key, op]) =>
        ['get', 'post'].includes(key)
          ? [key, { ...(op as Json), responses: { ...((op as Json).responses as Json), '429': response } }]
          : [key, op],
      );
      return [path, Object.fromEntries(operations)];
    }),
  );
}

/** The query parameters a GET signed with the agency's API key adds (spec 5.3), besides `agency`. */
export const signedGetParams: Json[] = [
  { name: 'exp', in: 'query', schema: { type: 'integer' }, description: 'Signed GET only.' },
  {
    name: 'signature',
    in: 'query',
    schema: { type: 'string', pattern: '^[0-9a-f]{16}$' },
    description: 'Signed GET only.',
  },
];

export const hostServer = (variable: 'base_url' | 'reports_url' | 'pay_url'): Json[] => [
  {
    url: `{${variable}}`,
    description: `The ${variable} host (one port serves all hosts by default)`,
    variables: { [variable]: { default: 'http://127.0.0.1:3000' } },
  },
];
