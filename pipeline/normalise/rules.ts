import type { BankTransaction } from '../../schemas/index.ts';
import type { NormalisedFields } from '../../core/store/index.ts';
import { ringgitNumberToSen, ringgitStringToSen } from '../../core/money.ts';
import { businessDate, parseOffsetDateTime } from '../../core/time.ts';

/**
 * Stable reason codes of what normalisation flags. A flagged record still flows to its agency's ledger;
 * the code says what a human should look at. docs/exceptions.md explains each.
 */
export const EXCEPTION_CODES = {
  FITRAH_MISMATCH: 'A fitrah amount is not zakat_rate x zakat_dependant.',
  FITRAH_RATE_MISSING: 'A fitrah record has no zakat_rate, so its amount cannot be checked.',
  FITRAH_DEPENDANT_MISSING: 'A fitrah record has no zakat_dependant, so its amount cannot be checked.',
  ZAKAT_AMOUNT_DIFFERS: 'data.zakat_amount disagrees with the transaction amount.',
  FITRAH_FIELDS_ON_NON_FITRAH: 'zakat_rate or zakat_dependant is set on a record that is not fitrah.',
  IC_INVALID_DATE: 'The first six digits of the IC number are not a valid YYMMDD birth date.',
  EMAIL_MISMATCH: 'data.email differs from the transaction email.',
  CONTROL_CHARACTER:
    'A text field (name, e-mail, address, ...) holds a control character; the workbook shows it as a symbol such as \u2400.',
} as const;

export type ExceptionCode = keyof typeof EXCEPTION_CODES;

/** `fitrah` and `zakat_fitrah` name the same zakat; both normalise to `fitrah`, the raw value is kept. */
const CANONICAL_TYPE: Record<string, string> = { zakat_fitrah: 'fitrah' };
const FITRAH = 'fitrah';

/** A bank record in canonical form, with its flags. Strings trimmed, emails lower-case, money in sen. */
export interface NormalisedRecord extends NormalisedFields {
  exceptions: ExceptionCode[];
}

const trimmed = (value: string | undefined): string | null => {
  const t = value?.trim();
  return t ? t : null;
};

/** Normalises one schema-valid bank record and flags what does not add up. Pure: same input, same output. */
export function normaliseRecord(record: BankTransaction): NormalisedRecord {
  const data = record.data;
  const time = parseOffsetDateTime(record.time);
  if (!time) throw new Error(`normaliseRecord needs a schema-valid time, got ${record.time}`);
  const typeRaw = trimmed(data.zakat_type);
  const type = typeRaw === null ? null : (CANONICAL_TYPE[typeRaw] ?? typeRaw);
  const email = record.email.trim().toLowerCase();
  const dataEmail = trimmed(data.email)?.toLowerCase() ?? null;
  const icNo = trimmed(data.zakat_ic_no);
  const rateSen = data.zakat_rate === undefined ? null : (ringgitStringToSen(data.zakat_rate.trim()) ?? null);
  const dependants = data.zakat_dependant === undefined ? null : Number(data.zakat_dependant.trim());
  const zakatAmountSen =
    data.zakat_amount === undefined ? null : (ringgitStringToSen(data.zakat_amount.trim()) ?? null);
  const amountSen = ringgitNumberToSen(record.amount);

  const exceptions: ExceptionCode[] = [];
  if (type === FITRAH) {
    if (rateSen === null) exceptions.push('FITRAH_RATE_MISSING');
    if (dependants === null) exceptions.push('FITRAH_DEPENDANT_MISSING');
    if (rateSen !== null && dependants !== null && rateSen * dependants !== amountSen) {
      exceptions.push('FITRAH_MISMATCH');
    }
  } else if (rateSen !== null || dependants !== null) {
    exceptions.push('FITRAH_FIELDS_ON_NON_FITRAH');
  }
  if (zakatAmountSen !== null && zakatAmountSen !== amountSen) exceptions.push('ZAKAT_AMOUNT_DIFFERS');
  if (icNo !== null && !isValidIcDate(icNo)) exceptions.push('IC_INVALID_DATE');
  if (dataEmail !== null && dataEmail !== email) exceptions.push('EMAIL_MISMATCH');

  const normalised: NormalisedRecord = {
    orderno: record.orderno,
    bankAgency: record.agency,
    status: record.status,
    amountSen,
    name: record.name.trim(),
    email,
    dataEmail,
    timeUtc: time.toISOString(),
    businessDate: businessDayOf(time),
    zakatName: trimmed(data.zakat_name),
    icNo,
    phone: trimmed(data.zakat_phone),
    state: trimmed(data.zakat_state),
    typeRaw,
    type,
    year: trimmed(data.zakat_year),
    address: trimmed(data.zakat_address),
    postcode: trimmed(data.zakat_postcode),
    city: trimmed(data.zakat_city),
    zakatAmountSen,
    rateSen,
    dependants,
    exceptions,
  };
  // Checked on the values kept (after trimming): those are what reports and workbooks show. A loop over
  // the fields rather than Object.values(...).some(...): no array and no closure per record.
  for (const key in normalised) {
    const value = normalised[key as keyof NormalisedRecord];
    if (typeof value === 'string' && CONTROL_CHARACTER.test(value)) {
      exceptions.push('CONTROL_CHARACTER');
      break;
    }
  }
  return normalised;
}

const HOUR_MS = 3_600_000;
/** Business days by UTC hour: Kuala Lumpur's offset is whole hours, so an hour's instants share one day. */
const daysByHour = new Map<number, string>();

/** businessDate(time), converted once per hour of time rather than once per record. */
function businessDayOf(time: Date): string {
  const hour = Math.floor(time.getTime() / HOUR_MS);
  let day = daysByHour.get(hour);
  if (day === undefined) {
    // A long-running worker meets new hours for ever: keep the memo small.
    if (daysByHour.size >= 10_000) daysByHour.clear();
    day = businessDate(new Date(hour * HOUR_MS));
    daysByHour.set(hour, day);
  }
  return day;
}

/**
 * C0 controls (tab, CR and LF included), DEL and C1 controls: never part of a name or an address, and
 * XML (so a workbook cell) cannot carry most of them. A bank that sends one has a bug worth seeing.
 */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * True when the IC's first six digits are a real YYMMDD date. The century is not written, so a date valid
 * in either 19YY or 20YY counts (29 February needs a leap year in one of them).
 */
export function isValidIcDate(ic: string): boolean {
  const match = /^(\d{2})(\d{2})(\d{2})\d{6}$/.exec(ic);
  if (!match) return false;
  const [, yy = '', mm = '', dd = ''] = match;
  const month = Number(mm);
  const day = Number(dd);
  if (month < 1 || month > 12 || day < 1) return false;
  return [1900, 2000].some((century) => {
    const year = century + Number(yy);
    const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
    return day <= daysInMonth;
  });
}
