/** OpenAPI paths of the QR codes (spec 1, 2.2, 4.1, 4.2): the unsigned QR on {base_url}, the generators on {reports_url}. */
import { busy, hostServer, problemResponse, tooManyRequests, type Json } from './openapi-parts.ts';

const TAGS = ['QR codes'];
const size: Json = {
  name: 'size',
  in: 'query',
  required: false,
  description:
    'Width and height of the image in pixels (modules are whole pixels, centred; quiet zone kept).',
  schema: { type: 'integer', minimum: 128, maximum: 1024, default: 256 },
};
const png = (description: string, cacheControl: string): Json => ({
  description,
  headers: {
    'Cache-Control': { schema: { type: 'string' }, description: cacheControl },
    ETag: { schema: { type: 'string' }, description: 'From the content and size; If-None-Match gives 304.' },
  },
  content: { 'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } } },
});

/** The form of both generators: fields of 2.2, extras as `extras[<key>]=<value>` (deepObject), signed. */
const generatorRequest: Json = {
  required: true,
  content: {
    'application/x-www-form-urlencoded': {
      schema: { $ref: '#/components/schemas/QrRequest' },
      encoding: { extras: { style: 'deepObject', explode: true } },
    },
  },
};

const generatorErrors = (extra: Json = {}): Json => ({
  '400': problemResponse('A field appears twice, or is named __proto__, constructor or prototype.'),
  '401': problemResponse(
    "No agency, or exp or signature missing, malformed, expired or not made with the agency's API key (an unknown agency is answered the same way).",
  ),
  '413': problemResponse('The form is over 16 KiB.'),
  '415': problemResponse('Not application/x-www-form-urlencoded.'),
  ...extra,
});

export function qrPaths(): Json {
  return {
    '/qr2': {
      servers: hostServer('base_url'),
      get: {
        operationId: 'redirectUnsignedQr',
        tags: TAGS,
        summary: 'Redirects to /qr2/, the query kept',
        responses: {
          '301': {
            description: 'Moved permanently to /qr2/ with the same query',
            headers: { Location: { schema: { type: 'string' } } },
          },
        },
      },
    },
    '/qr2/': {
      servers: hostServer('base_url'),
      get: {
        operationId: 'getUnsignedQr',
        tags: TAGS,
        summary: 'The unsigned QR code of a pay link of this service, as a PNG',
        description:
          'Renders q only when it is a pay link of this service: its origin is PUBLIC_BASE_URL and its path /pay/{agency}/{paymentCategory}/{refNo}/{amount} of an existing agency and category with a valid refNo and amount (a signed link must also carry a valid sig). Anything else is 400, so this is no open QR generator. The QR holds the URL as parsed (normalised). Anyone may call it: no credentials.',
        parameters: [
          {
            name: 'q',
            in: 'query',
            required: true,
            description: 'The pay link, URL-encoded; at most 1024 characters.',
            schema: { type: 'string', maxLength: 1024 },
          },
          size,
        ],
        responses: {
          '200': png('The QR code', 'public, max-age=86400: the image is a pure function of the query.'),
          '304': { description: 'Not modified (If-None-Match)' },
          '400': problemResponse(
            'q missing, too long, or not a pay link of this service (foreign origin, other path, unknown agency or category, bad refNo or amount, changed signed link); or a bad size.',
          ),
          '429': tooManyRequests('Too many requests from this client (RATE_LIMIT_PAGES_PER_MINUTE).'),
          '503': busy('Every QR rendering thread is busy and its queue is full.'),
        },
      },
    },
    '/api/qrcode/v1/generator': {
      servers: hostServer('reports_url'),
      post: {
        operationId: 'postQrGenerator',
        tags: TAGS,
        summary: 'A signed (tamper-resistant) QR code: a pay link signed by the service, served as a PNG',
        description:
          "Form fields of 2.2, signed by the POST rule of 5.3 with the agency's API key (extras[<key>] fields are signed under those literal names). The pay link in the QR code carries the extras as x.<key> and the service's own signature (sig): the pay page refuses it once its amount, refNo, category or extras are changed. It never expires; the PNG URL serves for QR_PNG_TTL_DAYS (90 days).",
        security: [{ signedRequest: [] }],
        requestBody: generatorRequest,
        responses: {
          '201': {
            description: 'Created. Location is the PNG URL.',
            headers: { Location: { schema: { type: 'string' } } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/QrCodeResponse' } } },
          },
          ...generatorErrors({
            '422': problemResponse(
              "A field breaks the rules (each with its pointer; an extras key __proto__, constructor or prototype too), the category is not the agency's, or the pay link would be over 1024 characters.",
            ),
          }),
        },
      },
    },
    '/api/duitnowqr/v1/generator': {
      servers: hostServer('reports_url'),
      post: {
        operationId: 'postDuitNowQrGenerator',
        tags: TAGS,
        summary: 'A DuitNow QR code (EMVCo merchant-presented, dynamic, with the amount), served as a PNG',
        description:
          "The same signed form (without extras). The payload: 00 format 02, 01 initiation 12, 26 merchant account (AID A0000006150001, the agency's acquirer id and merchant id), 52 category code (default 8661), 53 458, 54 amount, 58 MY, 59 name (<= 25), 60 city (<= 15), 62 with the refNo as bill number (sub-object 01, <= 25), 63 CRC-16/CCITT-FALSE. A value that does not fit is refused, never cut.",
        security: [{ signedRequest: [] }],
        requestBody: generatorRequest,
        responses: {
          '201': {
            description: 'Created. Location is the PNG URL.',
            headers: { Location: { schema: { type: 'string' } } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/DuitNowQrResponse' } } },
          },
          ...generatorErrors({
            '409': problemResponse('The agency has no DuitNow acquirer id, merchant id, name or city.'),
            '422': problemResponse(
              "A field breaks the rules, extras were sent, or a value does not fit its data object: the refNo (pointer /refNo) or one of the agency's DuitNow settings (pointer /agency).",
            ),
          }),
        },
      },
    },
    '/api/qrcode/v1/png/{token}.png': {
      servers: hostServer('reports_url'),
      get: {
        operationId: 'getQrPng',
        tags: TAGS,
        summary: 'The PNG of a generated QR code (the pngUrl of a generator answer)',
        description:
          'No credentials: the 128-bit token is unguessable. Served until the expiresAt of the generator answer, then 410.',
        parameters: [
          {
            name: 'token',
            in: 'path',
            required: true,
            description: 'From pngUrl',
            schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{22}$' },
          },
          size,
        ],
        responses: {
          '200': png('The QR code', 'public, max-age=<seconds until it expires>, immutable'),
          '304': { description: 'Not modified (If-None-Match)' },
          '400': problemResponse('A bad size.'),
          '404': problemResponse('No such QR code.'),
          '410': problemResponse('The QR code expired (qr-expired); generate it again.'),
          '503': busy('Every QR rendering thread is busy and its queue is full.'),
        },
      },
    },
  };
}
