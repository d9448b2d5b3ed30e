/** OpenAPI paths of the reconciliation runs on {reports_url}: an agency's runs and their workbooks. */
import {
  hostServer,
  jsonResponse,
  problemResponse,
  queryParameters,
  signedGetParams,
  type Json,
  type SchemaFiles,
} from './openapi-parts.ts';

const security = [{ reportToken: [] }, { signedRequest: [] }];

export function reconciliationPaths(files: SchemaFiles): Json {
  return {
    '/api/report/v1/reconciliation': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'listReconciliationRuns',
        tags: ['Reconciliation'],
        summary: "An agency's nightly (and re-run) reconciliation workbooks, newest day first",
        description:
          'One run per workbook: the business day, the instant it was read as of, the headline totals, the workbook SHA-256, what changed since the previous run of that day, and the e-mail deliveries. docs/reconciliation.md explains the sheets.',
        security,
        parameters: [...queryParameters(files, 'queries/reconciliation-runs-query.json'), ...signedGetParams],
        responses: {
          '200': jsonResponse(files, 'reconciliation-runs.json', 'The runs.'),
          '400': problemResponse('A bad query, or a repeated key.'),
          '401': problemResponse('No, expired, revoked or wrong credentials.'),
          '403': problemResponse('The credentials do not cover this agency.'),
        },
      },
    },
    '/api/report/v1/reconciliation/{runId}/workbook': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getReconciliationWorkbook',
        tags: ['Reconciliation'],
        summary: "A run's workbook (xlsx), for the agency it belongs to",
        security,
        parameters: [
          { name: 'runId', in: 'path', required: true, schema: { type: 'integer' } },
          { name: 'agency', in: 'query', schema: { type: 'string' }, description: 'With a signed GET.' },
          ...signedGetParams,
        ],
        responses: {
          '200': {
            description: 'The workbook, as e-mailed. Digest: its SHA-256.',
            content: {
              'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': {
                schema: { type: 'string', format: 'binary' },
              },
            },
          },
          '401': problemResponse('No, expired, revoked or wrong credentials.'),
          '404': problemResponse('No such run among the agencies the credentials cover.'),
        },
      },
    },
  };
}
