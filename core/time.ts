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
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
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
