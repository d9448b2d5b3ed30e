import { randomBytes, randomInt } from 'node:crypto';
import type { Deps } from '../../core/deps.ts';
import { DomainError } from '../../core/errors.ts';
import type { BlockList } from 'node:net';
import { isForbiddenAddress, parseAllowedAddresses } from '../../core/outbound/callback-client.ts';
import { parseOrderFields } from '../../core/payments/order-fields.ts';
import { NO_SUCH_AGENCY_KEY, verifySignedRequest } from '../../core/signatures.ts';
import type { AgencyRow, NewOrder, OrderRow } from '../../core/store/index.ts';
import { businessDate } from '../../core/time.ts';
import type { FieldError } from '../../schemas/index.ts';

const ORDER_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** `AM` + the Kuala Lumpur date (yymmdd) + 10 random characters (50 bits): readable, not guessable. */
export function newOrderNo(now: Date): string {
  let random = '';
  for (let i = 0; i < 10; i += 1) random += ORDER_ALPHABET[randomInt(ORDER_ALPHABET.length)];
  return `AM${businessDate(now).slice(2).replace(/-/g, '')}${random}`;
}

/**
 * Opens an order from checkout fields (POST /v2/checkout, or the pay page): the field rules of 2.1, the
 * agency's signature rule (docs/checkout.md), its callback hosts and categories. A merchant's refNo seen
 * before resumes its unpaid order (same amount), or is refused; a pay-link payment (`payLink`, the link
 * already checked by the pay page) is always a new order of its own. Nothing is written for a refused
 * request. `extras` are a signed pay link's (already verified), stored with the order.
 */
export async function openOrder(
  deps: Deps,
  entries: readonly (readonly [string, string])[],
  options: {
    path: string;
    payLink?: NonNullable<NewOrder['payLink']>;
    extras?: Readonly<Record<string, string>>;
  },
): Promise<{ order: OrderRow; agency: AgencyRow; created: boolean }> {
  const fromPayLink = options.payLink !== undefined;
  const { order: input, amountSen } = parseOrderFields(
    entries,
    deps.validators,
    deps.config.checkout.maxAmountSen,
    { returnUrlOptional: fromPayLink },
  );
  const agency = await deps.store.agencies.get(input.agency);
  const now = deps.clock.now();
  if (!agency) {
    // As the QR generators: answered as an agency that exists whose signature does not verify.
    const refusal = verifySignedRequest({
      method: 'POST',
      path: options.path,
      entries,
      apiKey: NO_SUCH_AGENCY_KEY,
      now,
    });
    throw new DomainError(refusal ?? 'signature-mismatch');
  }
  if (!fromPayLink) await checkSignature(deps, agency, entries, options.path, now);

  const errors: FieldError[] = [];
  if (input.returnUrl !== undefined) errors.push(...returnUrlProblems(deps, agency, input.returnUrl));
  if (
    input.paymentCategory !== undefined &&
    !agency.settings.paymentCategories.includes(input.paymentCategory)
  ) {
    errors.push({ pointer: '/paymentCategory', message: `is not a payment category of ${agency.code}` });
  }
  if (errors.length > 0)
    throw new DomainError('validation-failed', 'The payment order is not valid.', errors);

  const { created, order } = await deps.store.orders.createOrder({
    orderNo: newOrderNo(now),
    agencyCode: agency.code,
    refNo: input.refNo,
    extraData: input.extraData === '' ? null : (input.extraData ?? null),
    paymentCategory: input.paymentCategory ?? null,
    amountSen,
    email: input.email.toLowerCase(),
    returnUrl: input.returnUrl ?? '',
    formToken: randomBytes(16).toString('base64url'),
    at: now.toISOString(),
    extras: options.extras ?? null,
    ...(options.payLink && { payLink: options.payLink }),
  });
  if (!created) refuseUnlessResumable(order, amountSen);
  return { order, agency, created };
}

/** Agencies with an API key require signed orders unless they accept unsigned ones; a signature sent is always checked. */
async function checkSignature(
  deps: Deps,
  agency: AgencyRow,
  entries: readonly (readonly [string, string])[],
  path: string,
  now: Date,
): Promise<void> {
  const signed = entries.some(([key]) => key === 'signature');
  if (!signed && (agency.settings.acceptUnsignedOrders || !agency.hasApiKey)) return;
  const apiKey = await deps.store.agencies.apiKeyOf(agency.code);
  if (apiKey === undefined) throw new DomainError('signature-mismatch');
  const refusal = verifySignedRequest({ method: 'POST', path, entries, apiKey, now });
  if (refusal) throw new DomainError(refusal);
}

// The configured exemptions, parsed once per configuration rather than for every checkout.
const allowedLists = new WeakMap<readonly string[], BlockList>();

function allowedAddresses(list: readonly string[]): BlockList {
  let allowed = allowedLists.get(list);
  if (!allowed) {
    allowed = parseAllowedAddresses(list);
    allowedLists.set(list, allowed);
  }
  return allowed;
}

function returnUrlProblems(deps: Deps, agency: AgencyRow, returnUrl: string): FieldError[] {
  let url: URL;
  try {
    url = new URL(returnUrl);
  } catch {
    return [{ pointer: '/returnUrl', message: 'must be an absolute http:// or https:// URL' }];
  }
  if (url.username !== '' || url.password !== '') {
    return [{ pointer: '/returnUrl', message: 'must not carry a user name or password' }];
  }
  const host = url.hostname.toLowerCase();
  if (!agency.settings.callbackHosts.some((h) => h.toLowerCase() === host)) {
    return [
      { pointer: '/returnUrl', message: `host ${host} is not an allowed callback host of ${agency.code}` },
    ];
  }
  const literal = host.startsWith('[') ? host.slice(1, -1) : host;
  if (
    /^[\d.]+$|:/.test(literal) &&
    isForbiddenAddress(literal, allowedAddresses(deps.config.callbacks.allowedAddresses))
  ) {
    return [
      { pointer: '/returnUrl', message: 'must not point to a private, loopback or link-local address' },
    ];
  }
  return [];
}

function refuseUnlessResumable(order: OrderRow, amountSen: number): void {
  if (order.amountSen !== amountSen) {
    throw new DomainError(
      'order-conflict',
      `refNo ${order.refNo} already has an order for RM ${(order.amountSen / 100).toFixed(2)}.`,
    );
  }
  if (order.status === 'success')
    throw new DomainError('order-already-paid', `refNo ${order.refNo} is already paid.`);
  if (order.status === 'failed') {
    throw new DomainError(
      'order-failed',
      `The payment of refNo ${order.refNo} failed; start a new order with a new refNo.`,
    );
  }
}
