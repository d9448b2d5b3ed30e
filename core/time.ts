/** Business days are dates in Malaysia (UTC+8, no daylight saving). */
export const BUSINESS_TIMEZONE = 'Asia/Kuala_Lumpur';
const KL_OFFSET_MS = 8 * 60 * 60 * 1000;

/** An instant as a UTC ISO string with milliseconds, the one form instants are stored in. */
export function toUtcIso(date: Date): string {
  return date.toISOString();
}

/** An instant as Asia/Kuala_Lumpur wall time, `YYYY-MM-DD HH:mm:ss` (the report's created_date form). */
export function formatKl(date: Date): string {
  return new Date(date.getTime() + KL_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}

const DAY_MS = 24 * 60 * 60 * 1000;
// The last day asked for: the records of a batch mostly fall on one or two days, so most calls reuse it
// instead of formatting a date (once per ingested record).
let lastDayNumber = Number.NaN;
let lastDay = '';

/** The Asia/Kuala_Lumpur calendar date (YYYY-MM-DD) of an instant. */
export function businessDate(date: Date): string {
  const dayNumber = Math.floor((date.getTime() + KL_OFFSET_MS) / DAY_MS);
  if (dayNumber !== lastDayNumber) {
    // An invalid date (NaN) never matches, and throws here as toISOString does.
    lastDay = new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
    lastDayNumber = dayNumber;
  }
  return lastDay;
}

/** Whether a value is a calendar day, YYYY-MM-DD, that exists (2026-02-30 does not). */
export function isCalendarDay(value: string): boolean {
  // No year 0000: the era goes from 1 BC to AD 1, and PostgreSQL cannot read such a day's start (decision 277).
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || value.startsWith('0000')) return false;
  // Date.parse rolls 2026-02-31 over to 2026-03-03 instead of refusing it: the day must come back unchanged.
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/** The UTC instant (stored form) at which a Kuala Lumpur calendar day (YYYY-MM-DD) starts. */
export function klDayStartUtc(day: string): string {
  return new Date(`${day}T00:00:00+08:00`).toISOString();
}

/** The calendar day after a YYYY-MM-DD day. */
export function nextDay(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + 1);
  return date.toISOString().slice(0, 10);
}

/**
 * An ISO 8601 date-time with an offset (already checked by the schema), its parts read. The offset may be
 * `Z`, `+hh:mm`, `+hhmm` or `+hh` (ISO 8601 allows all three; many bank systems write `+0800`).
 */
const OFFSET_DATE_TIME =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)(?:Z|([+-])(\d{2})(?::(\d{2})|(\d{2}))?)$/;

/** The same date-time with its offset written `+hh:mm` (`+0800` and `+08` are `+08:00`); `Z` kept. */
export function normaliseOffset(value: string): string {
  if (plainOffsetEpoch(value) !== undefined) return value;
  const match = OFFSET_DATE_TIME.exec(value);
  if (!match) return value;
  const [, local, sign, oh, withColon, withoutColon] = match;
  return sign ? `${local}${sign}${oh}:${withColon ?? withoutColon ?? '00'}` : value;
}

/**
 * Parses an ISO 8601 date-time that carries an offset (already checked by the schema) to an instant.
 * Fractions beyond milliseconds are truncated.
 */
export function parseOffsetDateTime(value: string): Date | undefined {
  const plain = plainOffsetEpoch(value);
  if (plain !== undefined) return new Date(plain);
  const match =
    /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|([+-])(\d{2}):(\d{2}))$/.exec(
      normaliseOffset(value),
    );
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, frac = '', zone, sign, oh, om] = match;
  const ms = Number(frac.padEnd(3, '0').slice(0, 3));
  const date = new Date(Date.UTC(2000, Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms));
  date.setUTCFullYear(Number(y)); // Date.UTC would read years 0-99 as 1900-1999
  let epoch = date.getTime();
  if (zone !== 'Z') {
    const offset = (Number(oh) * 60 + Number(om)) * 60_000;
    epoch -= sign === '+' ? offset : -offset;
  }
  return Number.isFinite(epoch) ? new Date(epoch) : undefined;
}

/** The calendar day before a YYYY-MM-DD day. */
export function prevDay(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - 1);
  return date.toISOString().slice(0, 10);
}

const DASH = 0x2d;
const PLUS = 0x2b;
const COLON = 0x3a;
const T = 0x54;
/** The furthest instant a Date holds. */
const MAX_EPOCH_MS = 8.64e15;

/**
 * The instant of the form nearly every bank record carries, `YYYY-MM-DDThh:mm:ss+hh:mm` (25 characters),
 * read digit by digit when every part is in range (a year from 0100, a day of its month, hours to 23,
 * minutes and seconds to 59); undefined otherwise, for the regular expressions above to read, so every
 * value gets the instant it got before. Two regular expressions and a dozen substrings per record were a
 * tenth of preparing a batch.
 */
function plainOffsetEpoch(value: string): number | undefined {
  if (value.length !== 25) return undefined;
  const sign = value.charCodeAt(19);
  if (
    value.charCodeAt(4) !== DASH ||
    value.charCodeAt(7) !== DASH ||
    value.charCodeAt(10) !== T ||
    value.charCodeAt(13) !== COLON ||
    value.charCodeAt(16) !== COLON ||
    value.charCodeAt(22) !== COLON ||
    (sign !== PLUS && sign !== DASH)
  )
    return undefined;
  const year = digitsAt(value, 0, 4);
  const month = digitsAt(value, 5, 2);
  const day = digitsAt(value, 8, 2);
  const hour = digitsAt(value, 11, 2);
  const minute = digitsAt(value, 14, 2);
  const second = digitsAt(value, 17, 2);
  const offsetHours = digitsAt(value, 20, 2);
  const offsetMinutes = digitsAt(value, 23, 2);
  // NaN (a character that is not a digit) fails every comparison.
  const inRange =
    year >= 100 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 23 &&
    offsetMinutes <= 59;
  if (!inRange) return undefined;
  const offset = (offsetHours * 60 + offsetMinutes) * 60_000;
  const local = Date.UTC(year, month - 1, day, hour, minute, second);
  const epoch = sign === PLUS ? local - offset : local + offset;
  return Math.abs(epoch) <= MAX_EPOCH_MS ? epoch : undefined;
}

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
}

/** The number written by `count` ASCII digits at `start`, or NaN if any is not a digit. */
function digitsAt(value: string, start: number, count: number): number {
  let n = 0;
  for (let i = start; i < start + count; i += 1) {
    const d = value.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return Number.NaN;
    n = n * 10 + d;
  }
  return n;
}
