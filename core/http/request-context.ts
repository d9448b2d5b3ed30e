import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import { scalarLines, type Logger } from '../logger.ts';
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
  // The request line holds only the fields written below, none of them a secret or a personal datum, and
  // no object that a wildcard path could reach into; pino's wildcard redaction costs about 13 us per line
  // even so. Only the line goes without it: what handlers log (ctx.state.log) is redacted as before.
  const lines = requestLines(logger);
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
        // The id first, then the fields: the line a child carrying the id would write.
        lines.info(
          { request_id: requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms },
          'request',
        );
      }
    }
  };
}

/**
 * The logger of request lines: the root's destination and format, without redaction, at `info` (the
 * root's level decides whether a line is written at all).
 */
function requestLines(logger: Logger): Logger {
  return scalarLines(logger).child({}, { level: 'info' });
}
