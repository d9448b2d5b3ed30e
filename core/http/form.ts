import type { Context } from 'koa';
import { DomainError } from '../errors.ts';
import { readRawBody } from './raw-body.ts';

/** Largest form accepted by the form endpoints (checkout, pay page, QR generators). */
export const MAX_FORM_BYTES = 16 * 1024;

// The form a request already read: its body can be read only once.
const reads = new WeakMap<Context, Promise<[string, string][]>>();

/**
 * Names that, as a key of a plain object, would set its prototype or shadow its machinery instead of being
 * data (`o['__proto__'] = 'x'` is silently ignored). No field of ours has one; input that uses one is
 * refused, never dropped.
 */
const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** True when `key` is `__proto__`, `constructor` or `prototype`: refused wherever input becomes keys. */
export function isReservedKey(key: string): boolean {
  return RESERVED_KEYS.has(key);
}

/**
 * The fields of an application/x-www-form-urlencoded body, in received order (repeats kept: a signed form
 * refuses them, and the order matters to nobody else). 415 for another media type, 413 over the limit,
 * 400 for a field named `__proto__`, `constructor` or `prototype`. Read once per request: a middleware
 * that looked at the form (the per-client limits) leaves it for the route.
 */
export function readForm(ctx: Context, limit = MAX_FORM_BYTES): Promise<[string, string][]> {
  let read = reads.get(ctx);
  if (!read) {
    read = readFormOnce(ctx, limit);
    reads.set(ctx, read);
  }
  return read;
}

async function readFormOnce(ctx: Context, limit: number): Promise<[string, string][]> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new DomainError('unsupported-media-type', 'Send the form as application/x-www-form-urlencoded.');
  }
  const body = await readRawBody(ctx, limit);
  const entries = [...new URLSearchParams(body.toString('utf8')).entries()];
  const reserved = entries.find(([key]) => isReservedKey(key))?.[0];
  if (reserved !== undefined) {
    throw new DomainError(
      'bad-request',
      `The form field ${reserved} is not accepted: it is a reserved name.`,
      [{ pointer: `/${reserved}`, message: 'is a reserved name' }],
    );
  }
  return entries;
}
