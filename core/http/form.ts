import type { Context } from 'koa';
import { DomainError } from '../errors.ts';
import { readRawBody } from './raw-body.ts';

/** Largest form accepted by the form endpoints (checkout, pay page, QR generators). */
export const MAX_FORM_BYTES = 16 * 1024;

/**
 * The fields of an application/x-www-form-urlencoded body, in received order (repeats kept: a signed form
 * refuses them, and the order matters to nobody else). 415 for another media type, 413 over the limit.
 */
export async function readForm(ctx: Context, limit = MAX_FORM_BYTES): Promise<[string, string][]> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new DomainError('unsupported-media-type', 'Send the form as application/x-www-form-urlencoded.');
  }
  const body = await readRawBody(ctx, limit);
  return [...new URLSearchParams(body.toString('utf8')).entries()];
}
