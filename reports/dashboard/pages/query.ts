/** The pages' query parameters: read once, checked, and refused with JSON pointers when they are wrong. */
import type { Context } from 'koa';
import { DomainError } from '../../../core/errors.ts';
import { isCalendarDay } from '../../../core/time.ts';
import type { FieldError } from '../../../schemas/index.ts';

/** A query parameter given at most once (a repeated key is refused, as the report API does). */
function one(ctx: Context, key: string): string | undefined {
  const value = ctx.query[key];
  if (Array.isArray(value)) throw new DomainError('repeated-parameter');
  return value;
}

/** Rows per page of every dashboard table. */
export const PAGE_SIZE = 50;
/** Days the pages cover when no dates are given: the last seven, today included. */
export const DEFAULT_DAYS = 7;
/** The longest a filter may reach, so one request never reads years of rows into a page. */
const MAX_DAYS = 366;

/** The day `n` days before `day` (YYYY-MM-DD). */
export function daysBefore(day: string, n: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - n);
  return date.toISOString().slice(0, 10);
}

/** Collects field errors and throws them together, as the report API does. */
export class QueryReader {
  readonly errors: FieldError[] = [];
  constructor(private readonly ctx: Context) {}

  /** A trimmed value; empty is absent (an empty filter field means "any"). */
  text(key: string, max = 100): string | undefined {
    const value = one(this.ctx, key)?.trim();
    if (!value) return undefined;
    if (value.length > max) this.errors.push({ pointer: `/${key}`, message: `at most ${max} characters` });
    return value;
  }

  /** One of `choices`, or absent. */
  choice<T extends string>(key: string, choices: readonly T[]): T | undefined {
    const value = this.text(key);
    if (value === undefined) return undefined;
    if ((choices as readonly string[]).includes(value)) return value as T;
    this.errors.push({ pointer: `/${key}`, message: `must be one of ${choices.join(', ')}` });
    return undefined;
  }

  /** start and end (UTC+8 days); the last DEFAULT_DAYS days up to `today` when absent. */
  days(today: string): { start: string; end: string } {
    const end = this.text('end') ?? today;
    const start = this.text('start') ?? daysBefore(end, DEFAULT_DAYS - 1);
    for (const [key, value] of [
      ['start', start],
      ['end', end],
    ] as const) {
      if (!isCalendarDay(value))
        this.errors.push({ pointer: `/${key}`, message: 'must be a date that exists, YYYY-MM-DD' });
    }
    if (this.errors.length === 0) {
      if (end < start) this.errors.push({ pointer: '/end', message: 'must not be before start' });
      else if (daysBefore(end, MAX_DAYS - 1) > start)
        this.errors.push({ pointer: '/start', message: `at most ${MAX_DAYS} days before end` });
    }
    return { start, end };
  }

  /** The 0-based page number. */
  page(): number {
    const value = this.text('page') ?? '0';
    if (/^\d{1,6}$/.test(value)) return Number(value);
    this.errors.push({ pointer: '/page', message: 'must be a whole number from 0' });
    return 0;
  }

  /** Throws the collected errors as one 400. */
  done(): void {
    if (this.errors.length > 0)
      throw new DomainError('bad-request', 'The filters are not valid.', this.errors);
  }
}
