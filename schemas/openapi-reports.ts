/** OpenAPI paths of the report API on {reports_url} (spec 4.2): payments, one order, a payer, zakat, checks. */
import {
  hostServer,
  jsonResponse,
  problemResponse,
  queryParameters,
  signedGetParams,
  type Json,
  type SchemaFiles,
} from './openapi-parts.ts';

const TAGS = ['Reports'];
const security = [{ reportToken: [] }, { signedRequest: [] }];

export function reportPaths(files: SchemaFiles): Json {
  return {
    '/api/report/v1/payment': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getPaymentReport',
        tags: TAGS,
        summary:
          "An agency's payments, or a token's agencies combined (spec 2.3 envelope); bearer token or signed GET",
        description:
          'Paging: iterate page from 0 until a page has fewer rows than items. start/end are UTC+8 calendar days on created_date (default: all). A bearer token without agency gets the rows of every agency it covers, in one order (created_date, then fpx_seller_order_no), each row naming its agency.',
        security,
        parameters: [...queryParameters(files, 'queries/payment-report-query.json'), ...signedGetParams],
        responses: {
          '200': jsonResponse(files, 'responses/payment-report.json', 'The envelope of spec 2.3.'),
          '400': problemResponse('A bad query (each problem with its pointer), or a repeated key.'),
          '401': problemResponse('No, expired, revoked or wrong credentials.'),
          '403': problemResponse('The credentials do not cover this agency.'),
        },
      },
    },
    '/api/report/v1/fpxrequest': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getOrder',
        tags: TAGS,
        summary: 'One order by fpx_seller_order_no or refno, with its status history and callbacks',
        security,
        parameters: [...queryParameters(files, 'queries/order-query.json'), ...signedGetParams],
        responses: {
          '200': jsonResponse(files, 'responses/order-report.json', 'The order.'),
          '400': problemResponse('Neither or both of fpx_seller_order_no and refno, or a repeated key.'),
          '401': problemResponse('Credentials missing or wrong.'),
          '403': problemResponse('The credentials do not cover this agency.'),
          '404': problemResponse('No such order among the agencies the credentials cover.'),
        },
      },
    },
    '/api/user/v1/transactions': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getPayerTransactions',
        tags: TAGS,
        summary:
          "A payer's payments by email, only within the caller's agencies (personal data: auth required)",
        description:
          'Newest first, then by order number; a token covering several agencies gets their payments merged in that order. Paged as the payment report is: 100 rows a page unless items says otherwise; iterate page from 0 until a page has fewer rows than items, or ask items=-1 for every row, streamed.',
        security,
        parameters: [...queryParameters(files, 'queries/payer-transactions-query.json'), ...signedGetParams],
        responses: {
          '200': jsonResponse(files, 'responses/payer-transactions.json', "The payer's payments."),
          '400': problemResponse('No email, not an e-mail address, or items or page out of range.'),
          '401': problemResponse('Credentials missing or wrong.'),
        },
      },
    },
    '/api/report/v1/zakat': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getZakatReport',
        tags: TAGS,
        summary:
          "An agency's bank postings (or a token's agencies combined) for a business day or range, with exception codes",
        description:
          'Authenticate with Authorization: Bearer <report token>, or sign the GET with the agency API key (docs/signatures.md; agency, exp and signature in the query). A bearer token without agency gets the postings of every agency it covers, each row naming its agency. Rows come by business day, then in the order the bank posted them, each posting at its latest version in the ledger of its agency (the rows of the nightly workbook); a posting appears once the pipeline has added it to the ledger; every field of the bank record (spec 2.5) is shown, null when the bank did not send it. Paging: iterate page from 0 until a page has fewer rows than items.',
        security,
        parameters: [...queryParameters(files, 'queries/zakat-report-query.json'), ...signedGetParams],
        responses: {
          '200': jsonResponse(files, 'responses/zakat-report.json', 'The envelope of spec 2.3'),
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
        responses: { '200': jsonResponse(files, 'responses/version.json', 'The running version.') },
      },
    },
    '/api/echo': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getEcho',
        tags: ['Service'],
        summary: 'Connectivity check: echoes the query, with the time and request id (no auth)',
        responses: { '200': jsonResponse(files, 'responses/echo.json', 'The query, echoed.') },
      },
    },
  };
}
