import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../constant-time.ts';
import { ringgitStringToSen } from '../money.ts';
import { isReservedKey } from '../http/form.ts';
import { canonicalQuery, encodeRfc3986 } from '../signatures.ts';

/**
 * Pay links (spec 4.1): `/pay/{agency}/{paymentCategory}/{refNo}/{amount}`. Anyone may build one (the
 * unsigned QR code). A signed one, made by the QR generator, also carries the extras and the service's own
 * signature in its query: `?x.<key>=<value>&...&sig=<32 hex>`, so that a changed amount, refNo, category or
 * extra is refused by the pay page. docs/qr.md has the details.
 */
export interface PayLinkFields {
  agency: string;
  paymentCategory: string;
  refNo: string;
  amount: string;
}

export interface PayLink extends PayLinkFields {
  /** Key/value pairs of the signed link (spec 2.2 `extras`), carried into the order. */
  extras: Readonly<Record<string, string>>;
  /**
   * How often the link may be paid, chosen by whoever signs it: `once` (a household's fitrah QR) or `many`
   * (a mosque poster). An unsigned link is `many`: anyone can make one, so it is a template, never a debt.
   */
  uses: PayLinkUses;
}

export type PayLinkUses = 'once' | 'many';

/** Query parameter of the signature, and the prefix of each extra's parameter. */
export const SIG_PARAM = 'sig';
/** Query parameter of a signed link paid by many (`uses=many`); absent means once, as links always were. */
export const USES_PARAM = 'uses';
export const EXTRA_PREFIX = 'x.';
/** The bounds of extras: key pattern, value pattern (printable ASCII without `~`), how many. */
export const EXTRA_KEY = /^[A-Za-z0-9_]{1,32}$/;
export const EXTRA_VALUE = /^[\x20-\x7d]{1,64}$/;
export const MAX_EXTRAS = 10;

const SIGNATURE_HEX = 32;
// Domain separation: this HMAC can never be mistaken for another use of the secret.
const MESSAGE_PREFIX = 'amil-pay-link-v1\n';
const PATH = /^\/pay\/([^/]+)\/([^/]+)\/([^/]+)\/([^/]+)$/;

/** The path of a pay link; every segment percent-encoded (refNo may hold spaces, `/` or `?`). */
export function payLinkPath(link: PayLinkFields): string {
  const segments = [link.agency, link.paymentCategory, link.refNo, link.amount].map(encodeURIComponent);
  return `/pay/${segments.join('/')}`;
}

/** The decoded fields of a pay link path, or undefined when the path is not one. */
export function parsePayLinkPath(pathname: string): PayLinkFields | undefined {
  const match = PATH.exec(pathname);
  if (!match) return undefined;
  try {
    const [agency = '', paymentCategory = '', refNo = '', amount = ''] = match
      .slice(1)
      .map(decodeURIComponent);
    return { agency, paymentCategory, refNo, amount };
  } catch {
    return undefined;
  }
}

/**
 * What a pay link's refNo and amount must be (the agency and category are checked against the store):
 * refNo printable ASCII without `~`, 1 to 255 characters (2.1); amount ringgit with two decimals, >= 1.00.
 * Returns the problem, or undefined.
 */
export function payLinkFieldProblem(link: PayLinkFields): string | undefined {
  if (!/^[\x20-\x7d]{1,255}$/.test(link.refNo)) {
    return 'its refNo must be 1 to 255 printable ASCII characters without ~';
  }
  const sen = /^\d{1,9}\.\d{2}$/.test(link.amount) ? ringgitStringToSen(link.amount) : undefined;
  if (sen === undefined || sen < 100) return 'its amount must be ringgit with two decimals, at least 1.00';
  return undefined;
}

/** The service's signature of a pay link: HMAC-SHA256 with PAY_LINK_SECRET, hex, first 32 characters. */
export function payLinkSignature(secret: string, link: PayLink): string {
  const params: Record<string, string> = {
    agency: link.agency,
    paymentCategory: link.paymentCategory,
    refNo: link.refNo,
    amount: link.amount,
  };
  for (const [key, value] of Object.entries(link.extras)) params[`${EXTRA_PREFIX}${key}`] = value;
  // Only `many` is signed as a parameter, so every link signed before it existed keeps its signature.
  if (link.uses === 'many') params[USES_PARAM] = 'many';
  const message = MESSAGE_PREFIX + canonicalQuery(params, encodeRfc3986);
  return createHmac('sha256', secret).update(message, 'utf8').digest('hex').slice(0, SIGNATURE_HEX);
}

/** The absolute URL of a signed pay link: the path, the extras sorted by key, `uses=many`, then `sig`. */
export function signedPayLinkUrl(origin: string, secret: string, link: PayLink): string {
  const extras = Object.keys(link.extras)
    .sort()
    .map((key) => `${encodeRfc3986(EXTRA_PREFIX + key)}=${encodeRfc3986(link.extras[key] ?? '')}`);
  const uses = link.uses === 'many' ? [`${USES_PARAM}=many`] : [];
  const query = [...extras, ...uses, `${SIG_PARAM}=${payLinkSignature(secret, link)}`].join('&');
  return `${origin}${payLinkPath(link)}?${query}`;
}

/**
 * What identifies a link among its payments (stored with each, shown in the agency's reports): the path
 * of an unsigned link; the canonical signed URL (path and query, no origin) of a signed one.
 */
export function payLinkId(secret: string, link: PayLink, signed: boolean): string {
  return signed ? signedPayLinkUrl('', secret, link) : payLinkPath(link);
}

/** What the query of a pay link says: unsigned (the query is ignored), or a signature and its extras. */
export type PayLinkQuery =
  | { signed: false }
  | { signed: true; signature: string; extras: Record<string, string>; uses: PayLinkUses }
  | { malformed: string };

/**
 * Reads a pay link's query. Without `sig` the link is unsigned and the query is ignored (as an unsigned
 * link always was). With `sig`: every `x.<key>` is an extra; a repeated parameter or an extra out of bounds
 * is malformed (it cannot be one we signed). Other parameters (e.g. a messenger's tracking tag) are ignored.
 * `x.__proto__`, `x.constructor` and `x.prototype` are malformed, signed or not: such a key would vanish from
 * the extras object instead of being carried or refused.
 */
export function readPayLinkQuery(query: URLSearchParams): PayLinkQuery {
  for (const name of query.keys()) {
    if (name.startsWith(EXTRA_PREFIX) && isReservedKey(name.slice(EXTRA_PREFIX.length)))
      return { malformed: `${name} is a reserved name` };
  }
  const signatures = query.getAll(SIG_PARAM);
  if (signatures.length === 0) return { signed: false };
  const [signature = ''] = signatures;
  if (signatures.length > 1) return { malformed: `${SIG_PARAM} appears more than once` };
  const extras: Record<string, string> = {};
  for (const [name, value] of query) {
    if (!name.startsWith(EXTRA_PREFIX)) continue;
    const key = name.slice(EXTRA_PREFIX.length);
    if (Object.hasOwn(extras, key)) return { malformed: `${name} appears more than once` };
    if (!EXTRA_KEY.test(key) || !EXTRA_VALUE.test(value))
      return { malformed: `${name} is not a valid extra` };
    extras[key] = value;
  }
  if (Object.keys(extras).length > MAX_EXTRAS) return { malformed: `more than ${MAX_EXTRAS} extras` };
  const uses = query.getAll(USES_PARAM);
  if (uses.length > 1 || (uses.length === 1 && uses[0] !== 'many' && uses[0] !== 'once')) {
    return { malformed: `${USES_PARAM} must appear at most once, as many or once` };
  }
  return { signed: true, signature, extras, uses: uses[0] === 'many' ? 'many' : 'once' };
}

/** True when `signature` is the service's signature of the link (constant time). */
export function payLinkSignatureMatches(secret: string, link: PayLink, signature: string): boolean {
  if (!/^[0-9a-f]{32}$/.test(signature)) return false;
  return constantTimeEqual(signature, payLinkSignature(secret, link));
}
