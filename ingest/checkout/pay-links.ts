import type { Deps } from '../../core/deps.ts';
import {
  payLinkFieldProblem,
  payLinkSignatureMatches,
  readPayLinkQuery,
  type PayLink,
  type PayLinkFields,
  type PayLinkUses,
} from '../../core/payments/pay-link.ts';
import { formatSen, ringgitStringToSen } from '../../core/money.ts';
import type { AgencyRow } from '../../core/store/index.ts';

/** A pay link that checked out, or why not: unknown agency or category, a bad field, or a bad signature. */
export type PayLinkCheck =
  | { ok: true; link: PayLink; agency: AgencyRow; signed: boolean }
  | { ok: false; refusal: 'unknown' | 'invalid' | 'tampered'; detail: string };

/**
 * Checks a pay link (its path fields and its query) as the pay page and `/qr2/` both need it: a known
 * agency and one of its categories, a valid refNo and amount, and, when the link is signed, the service's
 * signature over all of it and its extras. An unsigned link has no extras.
 */
export async function checkPayLink(
  deps: Deps,
  fields: PayLinkFields,
  query: URLSearchParams,
): Promise<PayLinkCheck> {
  const agency = await deps.store.agencies.get(fields.agency);
  if (!agency || !agency.settings.paymentCategories.includes(fields.paymentCategory)) {
    return { ok: false, refusal: 'unknown', detail: 'There is no such agency or payment category.' };
  }
  const problem = payLinkFieldProblem(fields);
  if (problem) return { ok: false, refusal: 'invalid', detail: `This pay link is not valid: ${problem}.` };
  const read = readPayLinkQuery(query);
  if ('malformed' in read || (read.signed && !signatureMatches(deps, fields, read))) {
    return {
      ok: false,
      refusal: 'tampered',
      detail:
        `This pay link was changed after ${agency.name} made it: its amount, reference, category or ` +
        'details no longer match its signature. Scan the original QR code again, or ask the agency for a new one.' +
        // A malformed query says what is wrong (a repeat, an extra out of bounds, a reserved name).
        ('malformed' in read ? ` (${read.malformed}.)` : ''),
    };
  }
  if ((ringgitStringToSen(fields.amount) ?? 0) > deps.config.checkout.maxAmountSen) {
    // The checkout form would refuse it: say so on the pay page, before the payer types anything.
    return {
      ok: false,
      refusal: 'invalid',
      detail: `This pay link is not valid: its amount is above the most one payment can be (RM ${formatSen(deps.config.checkout.maxAmountSen)}).`,
    };
  }
  return {
    ok: true,
    link: read.signed
      ? { ...fields, extras: read.extras, uses: read.uses }
      : { ...fields, extras: {}, uses: 'many' },
    agency,
    signed: read.signed,
  };
}

function signatureMatches(
  deps: Deps,
  fields: PayLinkFields,
  read: { signature: string; extras: Record<string, string>; uses: PayLinkUses },
): boolean {
  return payLinkSignatureMatches(
    deps.config.payLinkSecret,
    { ...fields, extras: read.extras, uses: read.uses },
    read.signature,
  );
}
