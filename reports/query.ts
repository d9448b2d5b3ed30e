import type { Context, Next } from 'koa';
import { DomainError } from '../core/errors.ts';

/**
 * A day range's one rule a schema cannot say: `end` not before `start`. The days themselves are checked by
 * the query's schema file (schemas/queries/) before this.
 */
export function checkDayRange(start: string, end: string): void {
  if (end < start) {
    throw new DomainError('bad-request', 'The query is not valid.', [
      { pointer: '/end', message: 'must not be before start' },
    ]);
  }
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
