import { createHmac } from 'node:crypto';
import { constantTimeEqualOfLength } from './constant-time.ts';

/**
 * The signature of spec section 5.3, for signed GET URLs, signed POST bodies and direct callbacks.
 * This module is also the merchant toolkit (package export `amil/merchant-toolkit`): our own tests sign
 * and verify exactly as a merchant would. docs/signatures.md has worked test vectors.
 */

/** Seconds an outbound signature lives (spec 8), and the clock skew tolerated on each side. */
export const SIGNATURE_TTL_SECONDS = 60;
export const CLOCK_SKEW_SECONDS = 5;

const API_KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type Params = Readonly<Record<string, string>>;

/** RFC 3986: unreserved `A-Z a-z 0-9 - . _ ~` kept, every other UTF-8 byte as upper-case %XX. */
export function encodeRfc3986(value: string): string {
  // Most names and values are unreserved characters only: nothing to encode, nothing to allocate.
  if (!NEEDS_ENCODING.test(value)) return value;
  // encodeURIComponent also keeps ! ' ( ) *, which RFC 3986 reserves.
  const encoded = encodeURIComponent(value);
  return KEPT_RESERVED.test(encoded)
    ? encoded.replace(KEPT_RESERVED_ALL, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    : encoded;
}

const NEEDS_ENCODING = /[^A-Za-z0-9\-._~]/;
const KEPT_RESERVED = /[!'()*]/;
const KEPT_RESERVED_ALL = /[!'()*]/g;

/** Form style, exactly as WHATWG URLSearchParams serialises (space becomes `+`, `*` kept, `~` encoded). */
export function encodeForm(value: string): string {
  return new URLSearchParams([['', value]]).toString().slice(1);
}

/** `k=v` pairs sorted by key (UTF-16 code units), `signature` left out, joined by `&`. */
export function canonicalQuery(params: Params, encode: (value: string) => string): string {
  return Object.keys(params)
    .filter((key) => key !== 'signature')
    .sort()
    .map((key) => `${encode(key)}=${encode(params[key] ?? '')}`)
    .join('&');
}

/** The 16 raw bytes of an API key: the UUID without dashes, hex-decoded (never the ASCII text). */
export function apiKeyBytes(apiKey: string): Buffer {
  // A copy: the cached bytes sign every later message with this key, so no caller may change them.
  return Buffer.from(keyBytes(apiKey));
}

/**
 * The decoded bytes of the keys used lately, by the key's text: a key replaced is another text, so it is
 * decoded afresh and the old entry is only ever found by a request still signed with the old key. Bounded;
 * the oldest entry leaves first.
 */
const DECODED_KEYS = new Map<string, Buffer>();
export const DECODED_KEYS_KEPT = 1024;

function keyBytes(apiKey: string): Buffer {
  const cached = DECODED_KEYS.get(apiKey);
  if (cached) return cached;
  if (!API_KEY.test(apiKey)) throw new TypeError('an API key is a UUID: 8-4-4-4-12 hex digits');
  const bytes = Buffer.from(apiKey.replace(/-/g, ''), 'hex');
  if (DECODED_KEYS.size >= DECODED_KEYS_KEPT) DECODED_KEYS.delete(DECODED_KEYS.keys().next().value ?? '');
  DECODED_KEYS.set(apiKey, bytes);
  return bytes;
}

/** How many decoded keys are kept now (at most DECODED_KEYS_KEPT): for tests. */
export function decodedKeysKept(): number {
  return DECODED_KEYS.size;
}

/** HMAC-SHA256 of the message with the key, hex, first 16 characters. */
export function signMessage(message: string, apiKey: string): string {
  return createHmac('sha256', keyBytes(apiKey)).update(message, 'utf8').digest('hex').slice(0, 16);
}

const SIGNATURE = /^[0-9a-f]{16}$/i;

/**
 * Constant-time comparison of two signatures; a malformed one never matches. Hex is case-insensitive, so
 * upper-case (what .NET's Convert.ToHexString writes) matches too.
 */
export function signaturesEqual(expected: string, received: string): boolean {
  if (!SIGNATURE.test(received)) return false;
  // Every signature is 16 characters, so comparing the texts themselves tells nothing of a length.
  return constantTimeEqualOfLength(received.toLowerCase(), expected);
}

const nowSeconds = (now: Date) => Math.floor(now.getTime() / 1000);

/**
 * Signs an outbound GET: adds `exp` (now + 60 s), signs `<path>?<querystring>` and returns the URL path
 * with the query and `&signature=`.
 */
export function signGet(path: string, params: Params, apiKey: string, now: Date = new Date()): string {
  const withExp = { ...params, exp: String(nowSeconds(now) + SIGNATURE_TTL_SECONDS) };
  const query = canonicalQuery(withExp, encodeRfc3986);
  return `${path}?${query}&signature=${signMessage(`${path}?${query}`, apiKey)}`;
}

/**
 * Signs an outbound POST: adds `exp`, signs `<querystring>` (no path). Returns the fields to send, and the
 * same as an application/x-www-form-urlencoded body.
 */
export function signPost(
  params: Params,
  apiKey: string,
  now: Date = new Date(),
): { fields: Record<string, string>; body: string } {
  const withExp = { ...params, exp: String(nowSeconds(now) + SIGNATURE_TTL_SECONDS) };
  const fields = { ...withExp, signature: signMessage(canonicalQuery(withExp, encodeRfc3986), apiKey) };
  return { fields, body: new URLSearchParams(fields).toString() };
}

/** Signs the fields of a direct callback (form-style querystring, no path, no `exp`). */
export function signCallback(fields: Params, apiKey: string): string {
  return signMessage(canonicalForm(fields), apiKey);
}

/**
 * A direct callback's form body, signed: its fields in canonical order (sorted, `signature` left out), then
 * `&signature=`. The text signed is the body's own beginning, so the fields are serialised once.
 */
export function signedCallbackBody(fields: Params, apiKey: string): string {
  const canonical = canonicalForm(fields);
  const signature = `signature=${signMessage(canonical, apiKey)}`;
  return canonical === '' ? signature : `${canonical}&${signature}`;
}

/**
 * canonicalQuery(fields, encodeForm) in one serialisation: URLSearchParams writes each pair exactly as
 * encodeForm encodes it, `k=v` joined by `&`. Encoding each name and value through a URLSearchParams of its
 * own cost two of them per field on every callback delivered.
 */
function canonicalForm(fields: Params): string {
  const keys = Object.keys(fields)
    .filter((key) => key !== 'signature')
    .sort();
  return new URLSearchParams(keys.map((key): [string, string] => [key, fields[key] ?? ''])).toString();
}

/**
 * For merchants: true when a direct callback's `signature` matches its other fields. Pass the parsed form
 * (URLSearchParams, or a plain object). A missing or wrong signature, or a repeated field, is invalid.
 */
export function verifyCallback(form: URLSearchParams | Params, apiKey: string): boolean {
  const entries = form instanceof URLSearchParams ? [...form.entries()] : Object.entries(form);
  // No prototype, so a `__proto__` field is signed and checked like any other instead of vanishing.
  const fields = Object.create(null) as Record<string, string>;
  for (const [key, value] of entries) {
    if (Object.hasOwn(fields, key)) return false;
    fields[key] = value;
  }
  const received = fields.signature;
  if (received === undefined) return false;
  return signaturesEqual(signCallback(fields, apiKey), received);
}

/**
 * The key a request naming an agency that does not exist (or has no key) is checked against, so it gets
 * the answer a wrong signature gets, `exp` checks included: the answer never tells which agencies exist.
 */
export const NO_SUCH_AGENCY_KEY = '00000000-0000-4000-8000-000000000000';

/** Why a signed request was refused; each is its own problem type (never revealing the expected value). */
export type SignatureRefusal =
  | 'signature-missing'
  | 'signature-mismatch'
  | 'exp-missing'
  | 'exp-malformed'
  | 'exp-expired'
  | 'exp-too-far-ahead'
  | 'repeated-parameter';

/**
 * Verifies a signed inbound request (ours to check: QR generators, checkout). `entries` are the query (GET)
 * or form fields (POST) in received order. Returns the refusal, or undefined when the request is good.
 */
export function verifySignedRequest(input: {
  method: 'GET' | 'POST';
  path: string;
  entries: readonly (readonly [string, string])[];
  apiKey: string;
  now: Date;
}): SignatureRefusal | undefined {
  // No prototype, so a `__proto__` field is signed and checked like any other instead of vanishing.
  const fields = Object.create(null) as Record<string, string>;
  for (const [key, value] of input.entries) {
    if (Object.hasOwn(fields, key)) return 'repeated-parameter';
    fields[key] = value;
  }
  const exp = fields.exp;
  if (exp === undefined) return 'exp-missing';
  if (!/^\d{1,12}$/.test(exp)) return 'exp-malformed';
  const now = nowSeconds(input.now);
  if (Number(exp) < now - CLOCK_SKEW_SECONDS) return 'exp-expired';
  if (Number(exp) > now + SIGNATURE_TTL_SECONDS + CLOCK_SKEW_SECONDS) return 'exp-too-far-ahead';
  const received = fields.signature;
  if (received === undefined) return 'signature-missing';
  const query = canonicalQuery(fields, encodeRfc3986);
  const message = input.method === 'GET' ? `${input.path}?${query}` : query;
  return signaturesEqual(signMessage(message, input.apiKey), received) ? undefined : 'signature-mismatch';
}
