import type { FieldError } from '../schemas/index.ts';

/** Base URI of problem types; each is documented in docs/errors.md under its last segment. */
export const PROBLEM_BASE = 'https://docs.amil.my/problems/';

/**
 * The closed set of domain errors. Each code has one HTTP status and one title; handlers throw these and
 * one middleware writes them as application/problem+json.
 */
export const ERROR_CATALOGUE = {
  unauthorized: { status: 401, title: 'Authentication required' },
  'malformed-json': { status: 400, title: 'Malformed JSON' },
  'bad-request': { status: 400, title: 'Bad request' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'too-many-records': { status: 413, title: 'Too many records in one batch' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'validation-failed': { status: 422, title: 'Validation failed' },
  internal: { status: 500, title: 'Internal server error' },
  'not-implemented': { status: 501, title: 'Method not implemented' },
  unavailable: { status: 503, title: 'Service unavailable' },
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
