import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { Logger } from '../logger.ts';
import type { AppContext } from './state.ts';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * Gives each request an id (the client's X-Request-Id when it is sane, else a new UUID), echoes it, and
 * logs one line per request with a child logger that carries the id. Bodies and headers are not logged.
 */
export function requestContext(logger: Logger) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const offered = ctx.get('x-request-id');
    const requestId = CLIENT_REQUEST_ID.test(offered) ? offered : randomUUID();
    const log = logger.child({ request_id: requestId });
    ctx.state.requestId = requestId;
    ctx.state.log = log;
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 },
        'request',
      );
    }
  };
}
