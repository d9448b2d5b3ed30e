import type { Context, Next } from 'koa';
import type { AppContext } from './state.ts';
import { DomainError, ERROR_CATALOGUE, PROBLEM_BASE, type ErrorCode } from '../errors.ts';
import { isStoreOutage } from '../store/outage.ts';
import type { Problem } from '../../schemas/index.ts';
import type { Logger } from '../logger.ts';

/**
 * Most field errors one problem lists; a partner fixing a 5,000-record batch gets the first ones. Kept
 * small because building and sending each costs us, and a hostile batch can hold 400,000 problems.
 */
export const MAX_PROBLEM_ERRORS = 100;

/** Status codes koa or the router may raise themselves, mapped onto the catalogue. */
const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'bad-request',
  401: 'unauthorized',
  404: 'not-found',
  405: 'method-not-allowed',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  422: 'validation-failed',
  501: 'not-implemented',
  503: 'unavailable',
};

/** What a client is told when the database could not take its request just now (core/store/outage.ts). */
const OUTAGE_DETAIL = 'The database is busy or cannot be reached just now. Send the request again shortly.';
const OUTAGE_RETRY_AFTER_SECONDS = '2';

/** Writes a refusal as a page a person reads (status and headers are set already). */
export type HtmlErrorPage = (ctx: Context, error: DomainError) => void;

/**
 * The one error path: every failure leaves as application/problem+json, unknown errors as a bare 500;
 * with `htmlPage`, a browser (preferring HTML to JSON) gets the same refusal as a readable page instead.
 */
export function problemMiddleware(logger: Logger, htmlPage?: HtmlErrorPage) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    try {
      await next();
      // A status without a body (no route matched, or the router's 405/501 with its Allow header).
      if (ctx.body == null && ctx.status >= 400) throw toDomainError({ status: ctx.status });
    } catch (err) {
      const error = toDomainError(err);
      if (error.code === 'internal') {
        (ctx.state.log ?? logger).error({ err }, 'unhandled error');
      } else if (!(err instanceof DomainError) && isStoreOutage(err)) {
        // An outage answered 503: the client is told to retry, and ops see the cause.
        (ctx.state.log ?? logger).warn({ err }, 'the store could not take the request');
      }
      if (htmlPage && ctx.accepts('json', 'html') === 'html') {
        ctx.status = error.status;
        for (const [name, value] of Object.entries(error.extraHeaders)) ctx.set(name, value);
        htmlPage(ctx, error);
        return;
      }
      writeProblem(ctx, error);
    }
  };
}

/** The refusal an error is answered with (an unknown error: internal). */
export function toDomainError(err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  if (isStoreOutage(err)) {
    return new DomainError('unavailable', OUTAGE_DETAIL, [], { 'Retry-After': OUTAGE_RETRY_AFTER_SECONDS });
  }
  const status = (err as { status?: unknown; expose?: unknown } | null)?.status;
  if (typeof status === 'number' && STATUS_CODES[status]) return new DomainError(STATUS_CODES[status]);
  return new DomainError('internal');
}

function writeProblem(ctx: AppContext, error: DomainError): void {
  const entry = ERROR_CATALOGUE[error.code];
  const errors = error.fieldErrors.slice(0, MAX_PROBLEM_ERRORS);
  const problem: Problem = {
    type: `${PROBLEM_BASE}${error.code}`,
    title: entry.title,
    status: entry.status,
    ...(error.detail !== undefined && { detail: error.detail }),
    request_id: String(ctx.state.requestId ?? ''),
    ...(errors.length > 0 && { errors }),
    ...(error.fieldErrors.length > errors.length && { errors_truncated: true }),
  };
  ctx.status = entry.status;
  for (const [name, value] of Object.entries(error.extraHeaders)) ctx.set(name, value);
  ctx.body = problem;
  ctx.type = 'application/problem+json';
}
