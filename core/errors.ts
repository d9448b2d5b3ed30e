import type { FieldError } from '../schemas/index.ts';

/** Base URI of problem types; each is documented in docs/errors.md under its last segment. */
export const PROBLEM_BASE = 'https://docs.amil.my/problems/';

/**
 * The closed set of domain errors. Each code has one HTTP status and one title; handlers throw these and
 * one middleware writes them as application/problem+json.
 */
export const ERROR_CATALOGUE = {
  unauthorized: { status: 401, title: 'Authentication required' },
  'signature-missing': { status: 401, title: 'The request is not signed' },
  'signature-mismatch': { status: 401, title: 'The signature does not match the request' },
  'exp-missing': { status: 401, title: 'The signed request has no exp' },
  'exp-malformed': { status: 401, title: 'exp is not an integer of Unix seconds' },
  'exp-expired': { status: 401, title: 'The signed request has expired' },
  'exp-too-far-ahead': { status: 401, title: 'exp is more than 60 seconds ahead' },
  'token-malformed': { status: 401, title: 'The bearer token is not a JWT' },
  'token-invalid': { status: 401, title: 'The bearer token is not valid' },
  'token-expired': { status: 401, title: 'The bearer token has expired' },
  'token-revoked': { status: 401, title: 'The bearer token was revoked' },
  'repeated-parameter': { status: 400, title: 'A query or form key appears more than once' },
  'malformed-json': { status: 400, title: 'Malformed JSON' },
  'bad-request': { status: 400, title: 'Bad request' },
  forbidden: { status: 403, title: 'Not allowed for these credentials' },
  'pay-link-tampered': { status: 403, title: 'This pay link was changed after it was signed' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'order-conflict': { status: 409, title: 'The refNo already has an order for another amount' },
  'order-already-paid': { status: 409, title: 'This order is already paid' },
  'order-failed': { status: 409, title: 'This order was not paid; use a new refNo' },
  'pay-link-paid': { status: 409, title: 'This pay link is already paid' },
  'pay-link-in-progress': { status: 409, title: 'A payment of this pay link is in progress' },
  'duitnow-not-configured': { status: 409, title: 'DuitNow QR is not set up for this agency' },
  'qr-expired': { status: 410, title: 'This QR code has expired' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'too-many-records': { status: 413, title: 'Too many records in one batch' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'validation-failed': { status: 422, title: 'Validation failed' },
  'too-many-requests': { status: 429, title: 'Too many requests from this client; try again later' },
  internal: { status: 500, title: 'Internal server error' },
  'not-implemented': { status: 501, title: 'Method not implemented' },
  unavailable: { status: 503, title: 'Service unavailable' },
  'payments-not-configured': { status: 503, title: 'Payments are not configured' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** A field error that also names the batch record it belongs to. */
export interface RecordFieldError extends FieldError {
  index?: number;
  orderno?: string;
}

/** A refusal the client can act on. Its detail is safe to show; it never carries secrets. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
    readonly fieldErrors: readonly RecordFieldError[] = [],
    readonly extraHeaders: Readonly<Record<string, string>> = {},
  ) {
    super(detail ?? ERROR_CATALOGUE[code].title);
    this.name = 'DomainError';
  }

  get status(): number {
    return ERROR_CATALOGUE[this.code].status;
  }
}
