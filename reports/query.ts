import type { Context, Next } from 'koa';
import { DomainError } from '../core/errors.ts';
import { isCalendarDay } from '../core/time.ts';
import type { FieldError } from '../schemas/index.ts';

/** One query value; a repeated key is refused. */
export function one(ctx: Context, key: string): string | undefined {
  const value = ctx.query[key];
  if (Array.isArray(value)) throw new DomainError('repeated-parameter');
  return value;
}

/** Adds a field error when `value` (if given) is not a calendar date, YYYY-MM-DD, that exists. */
export function checkDate(key: string, value: string | undefined, errors: FieldError[]): void {
  if (value !== undefined && !isCalendarDay(value))
    errors.push({ pointer: `/${key}`, message: 'must be a date that exists, YYYY-MM-DD' });
}

/**
 * Report responses carry personal data (names, e-mails, IC numbers): no cache may keep them and no
 * browser may sniff them into something else. Set after the route, so it also wins over a route's own.
 */
export async function privateResponse(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
  } finally {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
  }
}
