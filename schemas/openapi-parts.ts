/** Building blocks of the OpenAPI document shared by its path files. */
export type Json = Record<string, unknown>;

export const problemResponse = (description: string): Json => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

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
