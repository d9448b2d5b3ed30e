import type { Context, Next } from 'koa';
import { constantTimeEqual } from '../constant-time.ts';
import { DomainError } from '../errors.ts';

/**
 * HTTP Basic authentication of the one `admin` user, for operator pages. Compared as SHA-256 digests in
 * constant time (core/constant-time.ts: equal lengths whatever was sent). A browser shows its login prompt on the 401.
 */
export function requireAdmin(password: string) {
  const expected = `admin:${password}`;
  return async (ctx: Context, next: Next): Promise<void> => {
    const header = ctx.get('authorization');
    const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header);
    const offered = match?.[1] ? Buffer.from(match[1], 'base64').toString('utf8') : '';
    // Through the one error path (problem+json, request id); the header makes a browser show its login prompt.
    if (!constantTimeEqual(offered, expected))
      throw new DomainError('unauthorized', undefined, [], {
        'WWW-Authenticate': 'Basic realm="amil admin", charset="UTF-8"',
      });
    await next();
  };
}
