/**
 * Paging over rows counted per day (the payment report's per-day counts on both engines, the zakat report's
 * ledger days on SQLite): a page at any depth is read from the day it starts on, skipping only rows of that
 * day, and up to the last day it reaches.
 */

/** Rows of one day, in report order of days. */
export interface DayCount {
  day: string;
  n: number;
}

/** Where a page falls: its first day and the rows of it to skip, and its last day (undefined: the range's). */
export interface PagePlace {
  day: string;
  skip: number;
  lastDay: string | undefined;
}

/** The total of `days`, and where the page of `limit` rows at `offset` falls (undefined: past the end). */
export function placePage(
  days: readonly DayCount[],
  offset: number,
  limit: number,
): { total: number; place: PagePlace | undefined } {
  const total = days.reduce((sum, day) => sum + day.n, 0);
  let skip = offset;
  for (const [i, { day, n }] of days.entries()) {
    if (skip < n)
      return { total, place: { day, skip, lastDay: lastDayReached(days.slice(i), skip + limit) } };
    skip -= n;
  }
  return { total, place: undefined };
}

/** The last of `days` that `need` rows from the first of them reach; undefined when they reach past all. */
function lastDayReached(days: readonly DayCount[], need: number): string | undefined {
  let covered = 0;
  for (const { day, n } of days) {
    covered += n;
    if (covered >= need) return day;
  }
  return undefined;
}
