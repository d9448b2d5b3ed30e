import { createHmac, randomBytes } from 'node:crypto';
import type { Context, Next } from 'koa';
import { DomainError } from '../core/errors.ts';
import { verifyPassword } from '../core/passwords.ts';
import type { Store } from '../core/store/index.ts';

interface Verified {
  passwordId: string;
  partnerId: string;
  expiresAt: number;
}

const CACHE_TTL_MS = 10 * 60_000;
const CACHE_MAX_ENTRIES = 1000;
const MAX_PASSWORD_LENGTH = 512;

/**
 * Checks X-API-Password against every active partner password (salted scrypt, constant-time compare).
 * scrypt is deliberately slow, so a verified password is remembered for a while under an HMAC of it with a
 * per-process random key (memory never holds the password itself); each hit still checks in SQLite that
 * the password was not revoked meanwhile. Wrong passwords are never cached.
 */
export function createPartnerAuthenticator(store: Store) {
  const cacheKey = randomBytes(32);
  const verified = new Map<string, Verified>();
  const inFlight = new Map<string, Promise<Verified | undefined>>();

  async function verifyAgainstStore(presented: string): Promise<Verified | undefined> {
    const candidates = await store.partners.activePasswords();
    // All in parallel: the time taken does not tell which password matched, and scrypt runs off-thread.
    const matches = await Promise.all(candidates.map((row) => verifyPassword(presented, row.hash)));
    const row = candidates[matches.indexOf(true)];
    return row && { passwordId: row.id, partnerId: row.partnerId, expiresAt: Date.now() + CACHE_TTL_MS };
  }

  return async function authenticate(presented: string): Promise<string | undefined> {
    if (presented === '' || presented.length > MAX_PASSWORD_LENGTH) return undefined;
    const key = createHmac('sha256', cacheKey).update(presented).digest('base64');
    const hit = verified.get(key);
    if (hit && hit.expiresAt > Date.now() && (await store.partners.isPasswordActive(hit.passwordId))) {
      return hit.partnerId;
    }
    verified.delete(key);
    let pending = inFlight.get(key);
    if (!pending) {
      pending = verifyAgainstStore(presented).finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    const result = await pending;
    if (!result) return undefined;
    if (verified.size >= CACHE_MAX_ENTRIES) verified.clear();
    verified.set(key, result);
    return result.partnerId;
  };
}

export type PartnerAuthenticator = ReturnType<typeof createPartnerAuthenticator>;

/** Route guard: 401 with no detail unless X-API-Password is a valid partner password. */
export function requirePartner(authenticate: PartnerAuthenticator) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const partnerId = await authenticate(ctx.get('x-api-password'));
    if (!partnerId) throw new DomainError('unauthorized');
    ctx.state.partnerId = partnerId;
    await next();
  };
}
