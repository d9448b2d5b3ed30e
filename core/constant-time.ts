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

/**
 * Equality in constant time of two texts whose length is public (a signature: always 16 hex characters),
 * without constantTimeEqual's two digests. Texts of different lengths are unequal at once: only use it where
 * every expected value has the one length anyone may know.
 */
export function constantTimeEqualOfLength(received: string, expected: string): boolean {
  const a = Buffer.from(received, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
