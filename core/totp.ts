/** The dashboard's optional second factor: RFC 6238 TOTP codes (otpauth), 6 digits every 30 seconds. */
import { Secret, TOTP } from 'otpauth';

const PERIOD_SECONDS = 30;

function totpOf(secret: string, account = ''): TOTP {
  return new TOTP({
    issuer: 'amil',
    label: account,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secret),
  });
}

/** A new random secret (160 bits, base32) and the otpauth:// URL an authenticator app reads. */
export function newTotpSecret(account: string): { secret: string; url: string } {
  const secret = new Secret({ size: 20 }).base32;
  return { secret, url: totpOf(secret, account).toString() };
}

/** The time step of a right code (one step of clock drift either way), or undefined when it is wrong. */
export function totpStep(secret: string, code: string, now: Date): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totpOf(secret).validate({ token: code, timestamp: now.getTime(), window: 1 });
  if (delta === null) return undefined;
  return Math.floor(now.getTime() / 1000 / PERIOD_SECONDS) + delta;
}

/** The code of the moment (tests, and an ops check of a user's device). */
export function totpCode(secret: string, now: Date): string {
  return totpOf(secret).generate({ timestamp: now.getTime() });
}
