import { randomUUID } from 'node:crypto';
import { SignJWT, errors, jwtVerify } from 'jose';
import type { Store } from './store/index.ts';

/** Report tokens are HS256 JWTs; the algorithm is pinned, so `alg: none` or any other is refused. */
const ALGORITHM = 'HS256';

export type TokenRefusal = 'token-malformed' | 'token-invalid' | 'token-expired' | 'token-revoked';

const keyOf = (secret: string) => new TextEncoder().encode(secret);

/** Parses a lifetime like `90d`, `12h`, `30m` or `3600s` to seconds; undefined when it is none of these. */
export function parseTtl(ttl: string): number | undefined {
  const match = /^(\d{1,6})([smhd])$/.exec(ttl);
  if (!match) return undefined;
  const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

/** Mints a report token for the agencies (claims agencies[], iat, exp, jti) and records its jti. */
export async function mintReportToken(
  store: Store,
  secret: string,
  input: { agencies: string[]; ttlSeconds: number; now: Date; label?: string },
): Promise<{ token: string; jti: string; expiresAt: Date }> {
  const jti = randomUUID();
  const iat = Math.floor(input.now.getTime() / 1000);
  const exp = iat + input.ttlSeconds;
  const token = await new SignJWT({ agencies: input.agencies })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(jti)
    .sign(keyOf(secret));
  const expiresAt = new Date(exp * 1000);
  await store.reportTokens.record({
    jti,
    agencies: input.agencies,
    label: input.label ?? null,
    issuedAt: input.now.toISOString(),
    expiresAt: expiresAt.toISOString(),
  });
  return { token, jti, expiresAt };
}

/**
 * The agencies a report token grants, or why it is refused. The stored record (by jti) is the authority:
 * it gives the agencies and the lifetime; claims that disagree with it are refused, so whoever learns the
 * secret still cannot widen or prolong a token without a record. A token without `exp` or `jti` is refused.
 */
export async function verifyReportToken(
  store: Store,
  secret: string,
  token: string,
  now: Date,
): Promise<{ agencies: string[] } | { refused: TokenRefusal }> {
  let payload;
  try {
    ({ payload } = await jwtVerify(token, keyOf(secret), {
      algorithms: [ALGORITHM],
      currentDate: now,
      requiredClaims: ['exp', 'jti'],
    }));
  } catch (err) {
    if (err instanceof errors.JWTExpired) return { refused: 'token-expired' };
    if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid)
      return { refused: 'token-malformed' };
    return { refused: 'token-invalid' };
  }
  const claimed = payload.agencies;
  if (
    typeof payload.jti !== 'string' ||
    !Array.isArray(claimed) ||
    !claimed.every((a) => typeof a === 'string')
  ) {
    return { refused: 'token-invalid' };
  }
  const row = await store.reportTokens.get(payload.jti);
  if (!row) return { refused: 'token-invalid' };
  if (row.revokedAt !== null) return { refused: 'token-revoked' };
  if (payload.exp !== Math.floor(Date.parse(row.expiresAt) / 1000) || !sameSet(claimed, row.agencies)) {
    return { refused: 'token-invalid' };
  }
  return { agencies: row.agencies };
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x) => b.includes(x)) && b.every((x) => a.includes(x));
