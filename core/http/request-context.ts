import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { Logger } from '../logger.ts';
import type { AppContext, AppState } from './state.ts';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

// Where a request's child logger is kept once made.
const CHILD = Symbol('request logger');
type WithChild = AppState & { [CHILD]?: Logger };

/**
 * Gives each request an id (the client's X-Request-Id when it is sane, else a new UUID), echoes it, and
 * logs one line per request carrying the id; `ctx.state.log` is a child logger that carries it too. Bodies
 * and headers are not logged.
 */
export function requestContext(logger: Logger) {
  // The child is made when first used: most requests log nothing but their line, and making one costs
  // a few microseconds (its bindings serialised and redacted). One descriptor for every request.
  const lazyLog: PropertyDescriptor = {
    get(this: WithChild): Logger {
      return (this[CHILD] ??= logger.child({ request_id: this.requestId }));
    },
    enumerable: true,
    configurable: true,
  };
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const offered = ctx.get('x-request-id');
    const requestId = CLIENT_REQUEST_ID.test(offered) ? offered : randomUUID();
    ctx.state.requestId = requestId;
    Object.defineProperty(ctx.state, 'log', lazyLog);
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      if (logger.isLevelEnabled('info')) {
        const ms = Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10;
        const fields = { method: ctx.method, path: ctx.path, status: ctx.status, ms };
        // The same line either way: the id first, then the fields.
        const child = (ctx.state as WithChild)[CHILD];
        if (child) child.info(fields, 'request');
        else logger.info({ request_id: requestId, ...fields }, 'request');
      }
    }
  };
}
