import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string | Uint8Array) => createHash('sha256').update(value).digest();

/**
 * Equality of a received secret and the expected one in constant time (tokens, signatures, passwords,
 * scrypt keys). Both are compared as SHA-256 digests, so the comparison has one length whatever was sent:
 * it tells neither where they differ nor how long the expected secret is.
 */
export function constantTimeEqual(received: string | Uint8Array, expected: string | Uint8Array): boolean {
  return timingSafeEqual(digest(received), digest(expected));
}
