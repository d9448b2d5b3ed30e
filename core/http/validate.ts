import type { Next } from 'koa';
import { DomainError } from '../errors.ts';
import type { QueryName, Validators } from '../../schemas/index.ts';
import type { AppContext } from './state.ts';

export interface ValidateOptions {
  /**
   * Values of keys the query left out, given before the check (they are checked as if sent): a default that
   * depends on the request or on another key, e.g. the zakat report's `end` (its `start`).
   */
  defaults?: (query: Readonly<Record<string, string>>) => Readonly<Record<string, string>>;
}

/**
 * Checks the query string against its schema file (schemas/queries/) and sets ctx.state.input to the typed
 * value, defaults filled in. A key of the file sent twice is 400 repeated-parameter; a bad value is 400
 * bad-request listing each problem with its JSON pointer (`/items`). Keys the file does not name are left
 * alone (a signed GET's exp and signature belong to its authentication).
 */
export function validate(validators: Validators, name: QueryName, options: ValidateOptions = {}) {
  const validator = validators.queries[name];
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const query: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const key of validator.keys) {
      const value = ctx.query[key];
      if (Array.isArray(value)) throw new DomainError('repeated-parameter');
      if (value !== undefined) query[key] = value;
    }
    for (const [key, value] of Object.entries(options.defaults?.(query) ?? {})) query[key] ??= value;
    const outcome = validator.check(query);
    if (!outcome.ok) throw new DomainError('bad-request', outcome.detail, outcome.errors);
    ctx.state.input = outcome.value;
    await next();
  };
}
