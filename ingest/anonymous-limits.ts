import type { Context, Middleware } from 'koa';
import type { Deps } from '../core/deps.ts';
import { DomainError } from '../core/errors.ts';
import { readForm } from '../core/http/form.ts';
import type { ClientLimit } from '../core/http/rate-limit.ts';

/** Which per-client limit a request of {base_url} counts against, if any (docs/decisions.md). */
async function anonymousLimitOf(ctx: Context): Promise<'orders' | 'pages' | undefined> {
  const { method, path } = ctx;
  const payPage = path.startsWith('/pay/');
  // Opening an order writes a row: the stricter budget.
  if (payPage && method === 'POST') return 'orders';
  // A merchant's signed POST /v2/checkout is not anonymous; an unsigned one (agencies that accept them)
  // opens an order for anyone, like the pay page.
  if (path === '/v2/checkout' && method === 'POST') return (await unsignedForm(ctx)) ? 'orders' : undefined;
  if (payPage || path === '/qr2/' || path.startsWith('/v2/checkout/') || path.startsWith('/sandbox/')) {
    return 'pages';
  }
  return undefined;
}

/**
 * Per-client limits (by `ctx.ip`, which honours TRUST_PROXY) on the anonymous endpoints of {base_url}: the
 * pay page, the checkout pages, `/qr2/` and the sandbox bank's pages. Past a limit: 429 with Retry-After,
 * as a page for browsers and as problem+json for API clients. Composed here, by path, so the routes stay
 * unaware of it.
 */
export function anonymousLimits(deps: Deps): Middleware {
  return async (ctx, next) => {
    const kind = await anonymousLimitOf(ctx);
    const limit: ClientLimit | undefined = kind && deps.limits[kind];
    if (limit) {
      const { retryAfterSeconds } = await limit.consume(ctx.ip);
      if (retryAfterSeconds !== undefined) {
        refuse(ctx, kind === 'orders', retryAfterSeconds);
        return;
      }
    }
    await next();
  };
}

/** A readable form without a signature (one that is sent is checked by the route; so is a bad form). */
async function unsignedForm(ctx: Context): Promise<boolean> {
  if (!ctx.is('application/x-www-form-urlencoded')) return false;
  try {
    const entries = await readForm(ctx);
    return !entries.some(([name, value]) => name === 'signature' && value !== '');
  } catch {
    return false;
  }
}

function refuse(ctx: Context, orders: boolean, retryAfterSeconds: number): void {
  const detail = orders
    ? `Too many payments were started from your network; try again in ${retryAfterSeconds} seconds.`
    : `Too many requests from your network; try again in ${retryAfterSeconds} seconds.`;
  const error = new DomainError('too-many-requests', detail, [], {
    'Retry-After': String(retryAfterSeconds),
  });
  // A browser gets the readable page from the one error path, Retry-After included.
  throw error;
}
