import { tlv, withCrc } from './emv.ts';

/**
 * The DuitNow QR payload (PayNet's DuitNow National QR Standard, merchant-presented mode, on EMVCo):
 * a dynamic code with the amount, the merchant account of the agency's acquirer and the refNo as the bill
 * number. Values that would not fit their data object are refused, never cut. Pure.
 */

/** DuitNow's application identifier, sub-object 00 of the merchant account information (ID 26). */
export const DUITNOW_AID = 'A0000006150001';
/** ISO 18245 merchant category used when the agency sets none: 8661, religious organisations. */
export const DEFAULT_CATEGORY_CODE = '8661';

export interface DuitNowInput {
  /** The agency's acquirer (bank) id and its merchant id there (the DuitNow QR ID). */
  acquirerId: string;
  merchantId: string;
  categoryCode: string;
  /** Ringgit with two decimals, as the request sent it ("10.00"). */
  amount: string;
  /** Merchant name (ID 59, at most 25) and city (ID 60, at most 15). */
  name: string;
  city: string;
  /** The bill number (ID 62, sub-object 01, at most 25). */
  refNo: string;
}

/** Which input did not fit, and why, so the caller can point at the request field or the agency setting. */
export interface DuitNowProblem {
  field: keyof DuitNowInput;
  message: string;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;
const MAX_LENGTH: Record<keyof DuitNowInput, number> = {
  acquirerId: 99,
  merchantId: 99,
  categoryCode: 4,
  amount: 13,
  name: 25,
  city: 15,
  refNo: 25,
};
const WHAT: Record<keyof DuitNowInput, string> = {
  acquirerId: 'the acquirer id (ID 26, sub-object 01)',
  merchantId: 'the merchant id (ID 26, sub-object 02)',
  categoryCode: 'the merchant category code (ID 52)',
  amount: 'the transaction amount (ID 54)',
  name: 'the merchant name (ID 59)',
  city: 'the merchant city (ID 60)',
  refNo: 'the bill number (ID 62, sub-object 01)',
};

/** Every value's problem: empty, not printable ASCII, or longer than its data object holds. */
export function duitNowProblems(input: DuitNowInput): DuitNowProblem[] {
  const problems: DuitNowProblem[] = [];
  for (const field of Object.keys(MAX_LENGTH) as (keyof DuitNowInput)[]) {
    const value = input[field];
    const max = MAX_LENGTH[field];
    if (!PRINTABLE_ASCII.test(value)) {
      problems.push({ field, message: `${WHAT[field]} must be 1 to ${max} printable ASCII characters` });
    } else if (value.length > max) {
      problems.push({
        field,
        message: `is ${value.length} characters; ${WHAT[field]} holds at most ${max}`,
      });
    }
  }
  if (!problems.some((p) => p.field === 'categoryCode') && !/^\d{4}$/.test(input.categoryCode)) {
    problems.push({ field: 'categoryCode', message: `${WHAT.categoryCode} is 4 digits` });
  }
  if (!problems.some((p) => p.field === 'amount') && !/^\d+\.\d{2}$/.test(input.amount)) {
    problems.push({ field: 'amount', message: `${WHAT.amount} is ringgit with two decimals` });
  }
  // ID 26 holds three data objects of 4 + n characters each: the AID's, the acquirer id's, the merchant id's.
  const account = 12 + DUITNOW_AID.length + input.acquirerId.length + input.merchantId.length;
  if (problems.length === 0 && account > 99) {
    problems.push({
      field: 'merchantId',
      message: `the merchant account information (ID 26) would be ${account} characters; at most 99 fit`,
    });
  }
  return problems;
}

/** The payload, ending in its CRC; or the problems, when any value does not fit. */
export function buildDuitNowPayload(
  input: DuitNowInput,
): { payload: string } | { problems: DuitNowProblem[] } {
  const problems = duitNowProblems(input);
  if (problems.length > 0) return { problems };
  return {
    payload: withCrc(
      [
        tlv('00', '02'), // payload format indicator: DuitNow QR version "02"
        tlv('01', '12'), // point of initiation: dynamic (it carries the amount of one payment)
        tlv('26', tlv('00', DUITNOW_AID) + tlv('01', input.acquirerId) + tlv('02', input.merchantId)),
        tlv('52', input.categoryCode),
        tlv('53', '458'), // ISO 4217: Malaysian ringgit
        tlv('54', input.amount),
        tlv('58', 'MY'),
        tlv('59', input.name),
        tlv('60', input.city),
        tlv('62', tlv('01', input.refNo)),
      ].join(''),
    ),
  };
}
