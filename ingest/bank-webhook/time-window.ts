import type { Config } from '../../core/config.ts';
import { DomainError, type RecordFieldError } from '../../core/errors.ts';
import { parseOffsetDateTime } from '../../core/time.ts';
import type { BankTransaction } from '../../schemas/index.ts';

/**
 * Refuses (422, nothing stored) a batch with a record whose `time` lies outside the window around the
 * batch's receipt. A time like 9999-12-31T23:59:59-23:59 passes the schema but has a business date
 * (+010000-01-01) no report or workbook asks for: accepted, it would be money nobody sees.
 */
export function checkTimeWindow(
  transactions: readonly BankTransaction[],
  receivedAt: Date,
  window: Pick<Config['webhook'], 'timePastDays' | 'timeFutureMinutes'>,
  instants: readonly (Date | undefined)[] = transactions.map((record) => parseOffsetDateTime(record.time)),
): void {
  const earliest = receivedAt.getTime() - window.timePastDays * 86_400_000;
  const latest = receivedAt.getTime() + window.timeFutureMinutes * 60_000;
  const message =
    `must be at most ${window.timePastDays} days before and ${window.timeFutureMinutes} minutes after ` +
    `the batch was received (${receivedAt.toISOString()})`;
  const errors: RecordFieldError[] = [];
  transactions.forEach((record, index) => {
    const at = instants[index]?.getTime();
    if (at !== undefined && at >= earliest && at <= latest) return;
    errors.push({ index, orderno: record.orderno, pointer: `/transactions/${index}/time`, message });
  });
  if (errors.length === 0) return;
  throw new DomainError(
    'validation-failed',
    `${errors.length} record(s) have a time outside the accepted window; nothing of the batch was stored.`,
    errors,
  );
}
