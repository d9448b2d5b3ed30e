import { randomBytes, scrypt, type ScryptOptions } from 'node:crypto';
import { constantTimeEqual } from './constant-time.ts';

// Partner passwords are long random secrets, not human-chosen words: N = 2^14 (16 MiB, ~40 ms) is ample,
// and the web tier caches verified passwords (see ingest/partner-auth.ts) so it is paid once per password.
const PARAMS = { N: 16384, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, KEY_LENGTH, { ...options, maxmem: 64 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** A salted scrypt hash in the self-describing form `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

/** Too many password checks are already waiting: the caller answers 503 rather than queue without end. */
export class PasswordChecksBusyError extends Error {
  constructor() {
    super('too many password checks are waiting');
    this.name = 'PasswordChecksBusyError';
  }
}

// scrypt runs on libuv's pool (4 threads by default), which file reads, zlib and DNS share: verifications
// get at most two of them at a time, so a flood of wrong passwords can never take the whole pool.
const MAX_CONCURRENT_VERIFICATIONS = 2;
const MAX_WAITING_VERIFICATIONS = 512;
let running = 0;
const waiting: (() => void)[] = [];

async function withVerificationSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT_VERIFICATIONS) {
    if (waiting.length >= MAX_WAITING_VERIFICATIONS) throw new PasswordChecksBusyError();
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else {
    running += 1;
  }
  try {
    return await work();
  } finally {
    // The slot passes straight to the next waiter, so `running` never drops below what is in flight.
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

/**
 * Compares a password with a stored hash in constant time. A malformed hash never matches. At most two
 * verifications run at once in the process (throws PasswordChecksBusyError when too many wait).
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  return withVerificationSlot(() => verifyNow(password, stored));
}

async function verifyNow(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, saltText = '', keyText = ''] = parts;
  const expected = Buffer.from(keyText, 'base64url');
  const key = await derive(password, Buffer.from(saltText, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return constantTimeEqual(key, expected);
}

/** A new random partner password: 32 bytes, base64url (43 characters). */
export function generatePassword(): string {
  return randomBytes(32).toString('base64url');
}
