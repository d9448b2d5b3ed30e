import type { Deps } from '../../core/deps.ts';
import {
  payLinkFieldProblem,
  payLinkSignatureMatches,
  readPayLinkQuery,
  type PayLink,
  type PayLinkFields,
} from '../../core/payments/pay-link.ts';
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
  return {
    ok: true,
    link: { ...fields, extras: read.signed ? read.extras : {} },
    agency,
    signed: read.signed,
  };
}

function signatureMatches(
  deps: Deps,
  fields: PayLinkFields,
  read: { signature: string; extras: Record<string, string> },
): boolean {
  return payLinkSignatureMatches(
    deps.config.payLinkSecret,
    { ...fields, extras: read.extras },
    read.signature,
  );
}
