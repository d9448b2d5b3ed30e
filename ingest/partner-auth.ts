import { createHmac, randomBytes } from 'node:crypto';
import type { Next } from 'koa';
import { DomainError } from '../core/errors.ts';
import type { ClientLimit } from '../core/http/rate-limit.ts';
import type { AppContext } from '../core/http/state.ts';
import { PasswordChecksBusyError, verifyPassword } from '../core/passwords.ts';
import type { Store } from '../core/store/index.ts';

interface Verified {
  passwordId: string;
  partnerId: string;
  expiresAt: number;
}

interface Failed {
  /** The active passwords when it failed: a password added since voids the memory. */
  activeIds: string;
  expiresAt: number;
}

const CACHE_TTL_MS = 10 * 60_000;
const CACHE_MAX_ENTRIES = 1000;
// Long enough that a flood repeating one wrong value costs one scrypt per minute, short enough that a
// partner who sent a password just before it was added is not kept out for long.
const FAILED_TTL_MS = 60_000;
const FAILED_MAX_ENTRIES = 10_000;
const MAX_PASSWORD_LENGTH = 512;
const BUSY_RETRY_AFTER_SECONDS = 1;

export interface PartnerAuthOptions {
  /** The per-client budget of wrong passwords (undefined: no limit). */
  failures?: ClientLimit | undefined;
  /** Checks a password against a stored hash; tests pass a counting wrapper. */
  verify?: (password: string, hash: string) => Promise<boolean>;
}

/**
 * Checks X-API-Password against every active partner password (salted scrypt, constant-time compare).
 * scrypt is deliberately slow, so:
 * - a verified password is remembered for a while under an HMAC of it with a per-process random key
 *   (memory never holds the password itself); each hit still checks in SQLite that it was not revoked;
 * - a client past its budget of wrong passwords gets 429 before any scrypt (an attempt reserves a point,
 *   given back when the password is right);
 * - a wrong password is remembered briefly under its HMAC, so sending it again costs no scrypt;
 * - at most two scrypt verifications run at once (core/passwords.ts), leaving libuv's pool to the rest.
 */
export function createPartnerAuthenticator(store: Store, options: PartnerAuthOptions = {}) {
  const verify = options.verify ?? verifyPassword;
  const cacheKey = randomBytes(32);
  const verified = new Map<string, Verified>();
  const failed = new Map<string, Failed>();
  const inFlight = new Map<string, Promise<Verified | undefined>>();

  async function verifyAgainstStore(key: string, presented: string): Promise<Verified | undefined> {
    const candidates = await store.partners.activePasswords();
    const activeIds = candidates.map((row) => row.id).join(',');
    const known = failed.get(key);
    if (known && known.expiresAt > Date.now() && known.activeIds === activeIds) return undefined;
    // All in parallel: the time taken does not tell which password matched, and scrypt runs off-thread.
    const matches = await Promise.all(candidates.map((row) => verify(presented, row.hash)));
    const row = candidates[matches.indexOf(true)];
    // Still active now that scrypt is done: the checks can queue for seconds on a busy process, and a
    // revocation committed meanwhile (by the CLI, or another process) must refuse this request and every
    // request that joined it, as it refuses those that come after.
    if (row) {
      if (!(await store.partners.isPasswordActive(row.id))) return undefined;
      return { passwordId: row.id, partnerId: row.partnerId, expiresAt: Date.now() + CACHE_TTL_MS };
    }
    if (failed.size >= FAILED_MAX_ENTRIES) failed.delete(failed.keys().next().value ?? '');
    failed.set(key, { activeIds, expiresAt: Date.now() + FAILED_TTL_MS });
    return undefined;
  }

  async function check(key: string, presented: string): Promise<Verified | undefined> {
    let pending = inFlight.get(key);
    if (!pending) {
      pending = verifyAgainstStore(key, presented).finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    try {
      return await pending;
    } catch (err) {
      if (!(err instanceof PasswordChecksBusyError)) throw err;
      throw new DomainError('unavailable', 'Too many password checks are waiting; try again shortly.', [], {
        'Retry-After': String(BUSY_RETRY_AFTER_SECONDS),
      });
    }
  }

  /** Takes one attempt from the client's budget, or throws 429 when it is spent. */
  async function reserveAttempt(client: string): Promise<void> {
    const { retryAfterSeconds } = (await options.failures?.consume(client)) ?? {};
    if (retryAfterSeconds === undefined) return;
    throw new DomainError(
      'too-many-requests',
      `Too many wrong passwords from this client; try again in ${retryAfterSeconds} seconds.`,
      [],
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }

  /** The partner id of `presented`, or undefined; throws 429 when `client` is past its budget. */
  return async function authenticate(presented: string, client: string): Promise<string | undefined> {
    if (presented === '') return undefined;
    const key = createHmac('sha256', cacheKey).update(presented).digest('base64');
    const hit = verified.get(key);
    // A known good password is never limited: a partner sharing an address with an attacker keeps working.
    if (hit && hit.expiresAt > Date.now() && (await store.partners.isPasswordActive(hit.passwordId))) {
      return hit.partnerId;
    }
    verified.delete(key);
    if (presented.length > MAX_PASSWORD_LENGTH) {
      await reserveAttempt(client);
      return undefined;
    }
    // Requests joining a check already running for the same value wait for it at no cost: a partner's
    // first burst after a restart spends one attempt, not one per request.
    const joining = inFlight.has(key);
    if (!joining) await reserveAttempt(client);
    const result = await check(key, presented).catch(async (err: unknown) => {
      // Not a wrong password: the store could not answer (or the checks were busy). The attempt is given
      // back, or a bank posting through a database outage is locked out as a guesser once it is over.
      if (!joining) await options.failures?.reward(client).catch(() => undefined);
      throw err;
    });
    if (!result) return undefined;
    if (!joining) await options.failures?.reward(client);
    if (verified.size >= CACHE_MAX_ENTRIES) verified.clear();
    verified.set(key, result);
    return result.partnerId;
  };
}

export type PartnerAuthenticator = ReturnType<typeof createPartnerAuthenticator>;

/** Route guard: 401 with no detail unless X-API-Password is a valid partner password; 429 past the limit. */
export function requirePartner(authenticate: PartnerAuthenticator) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const partnerId = await authenticate(ctx.get('x-api-password'), ctx.ip);
    if (!partnerId) throw new DomainError('unauthorized');
    ctx.state.partnerId = partnerId;
    await next();
  };
}
