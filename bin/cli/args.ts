/**
 * Argument parsers shared by several command groups. Each throws commander's InvalidArgumentError, which
 * the error printer reports as a usage error (exit 2) naming the option.
 */
import { InvalidArgumentError } from 'commander';
import { systemClock } from '../../core/clock.ts';
import { TEST_SINK } from '../../core/store/index.ts';
import { businessDate, isCalendarDay, parseOffsetDateTime, prevDay } from '../../core/time.ts';

/** An agency code: 2-16 capitals and digits. */
export const agencyCode = (value: string): string => {
  if (!/^[A-Z][A-Z0-9]{1,15}$/.test(value))
    throw new InvalidArgumentError('an agency code is 2-16 capitals and digits, e.g. LZS');
  return value;
};

/** A comma-separated list, blanks dropped. */
export const list = (value: string): string[] =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');

/** A calendar day that exists, YYYY-MM-DD. */
export const day = (value: string): string => {
  if (!isCalendarDay(value))
    throw new InvalidArgumentError(`${value} is not a day that exists (YYYY-MM-DD, Asia/Kuala_Lumpur)`);
  return value;
};

/** A day already over in Kuala Lumpur: a workbook of a day still running would be mailed half-empty. */
export const pastDay = (value: string): string => {
  const today = businessDate(systemClock.now());
  if (day(value) >= today)
    throw new InvalidArgumentError(
      `${value} is not over yet in Kuala Lumpur (today there is ${today}); the latest day to reconcile is ${prevDay(today)}`,
    );
  return value;
};

/** An instant with its UTC offset. */
export const instant = (value: string): Date => {
  const date = parseOffsetDateTime(value);
  if (!date) throw new InvalidArgumentError('an instant with its offset, e.g. 2026-11-21T00:30:00+08:00');
  return date;
};

/** How operators name the bank live-test report's sink. */
export const sinkName = (sink: string): string => (sink === TEST_SINK ? 'BANK-TEST' : sink);
/** The sink an `--agency` value names (BANK-TEST in any case is the bank live-test report). */
export const sinkOf = (value: string): string => (value.toUpperCase() === 'BANK-TEST' ? TEST_SINK : value);
