import type { Context } from 'koa';
import { DomainError } from '../core/errors.ts';
import type { FieldError } from '../schemas/index.ts';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** One query value; a repeated key is refused. */
export function one(ctx: Context, key: string): string | undefined {
  const value = ctx.query[key];
  if (Array.isArray(value)) throw new DomainError('repeated-parameter');
  return value;
}

/** Adds a field error when `value` (if given) is not a calendar date, YYYY-MM-DD. */
export function checkDate(key: string, value: string | undefined, errors: FieldError[]): void {
  if (value !== undefined && (!DATE.test(value) || Number.isNaN(Date.parse(value))))
    errors.push({ pointer: `/${key}`, message: 'must be a date, YYYY-MM-DD' });
}
