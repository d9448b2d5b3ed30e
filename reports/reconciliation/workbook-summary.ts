/** The Summary sheet, the workbook's first tab: control totals, breakdowns, the pending roll, adjustments. */
import { klDayStartUtc } from '../../core/time.ts';
import { TEST_SINK } from '../../core/store/index.ts';
import type { ReconChannel } from '../../core/store/index.ts';
import { addTextRow } from './cells.ts';
import type { DeterministicWorkbookWriter } from './deterministic-writer.ts';
import { stateName, typeName } from './names.ts';
import { STATUSES, type BreakdownLine, type DaySummary, type Total } from './summary.ts';
import { CHANNEL_LABEL, DATE_TIME, kl, MONEY, rm } from './workbook-columns.ts';

/** Writes the Summary sheet into the first tab reserved for it (it is written last, once counted). */
export function writeSummary(
  workbook: DeterministicWorkbookWriter,
  summary: DaySummary,
  title: string,
  transactionSheets: readonly string[],
): void {
  const sheet = workbook.addReservedSheet('Summary', { views: [{ state: 'frozen', ySplit: 1 }] });
  sheet.columns = [{ width: 44 }, ...Array.from({ length: 9 }, () => ({ width: 16 }))];
  const line = (values: unknown[], options: { bold?: boolean; money?: number[] } = {}) => {
    const row = addTextRow(sheet, values);
    if (options.bold) row.font = { bold: true };
    for (const col of options.money ?? []) row.getCell(col).numFmt = MONEY;
    values.forEach((value, i) => {
      if (value instanceof Date) row.getCell(i + 1).numFmt = DATE_TIME;
    });
    row.commit();
  };
  const totalCells = (t: Total) => [t.count, rm(t.sumSen)];
  const isTest = summary.sink === TEST_SINK;

  line([isTest ? 'Bank live-test report' : 'Reconciliation workbook', title], { bold: true });
  line(['Agency', isTest ? 'BANK (live tests, not zakat)' : summary.sink]);
  line(['Business day (Asia/Kuala_Lumpur)', summary.day]);
  line(['Run id', summary.runId]);
  // The as-of time is what the figures mean (never the wall clock: same inputs, same bytes).
  line(['Figures include data received before (UTC+8)', kl(summary.asOf)]);
  line(['Changes counted from (UTC+8)', kl(klDayStartUtc(summary.day))]);
  line(['Content fingerprint (SHA-256)', summary.fingerprint]);
  // Only a day past Excel's row limit has this line, so other days' bytes do not change.
  if (transactionSheets.length > 1) line(['Transactions are on the sheets', transactionSheets.join(', ')]);
  line([]);
  if (summary.inputs.transactions === 0) {
    line(['No postings or payments on this day.'], { bold: true });
    line([]);
  }
  line(['Input counts', 'Count'], { bold: true });
  line(['Transactions of the day', summary.inputs.transactions]);
  line(['Flagged transactions', summary.inputs.flagged]);
  line(['Anomalies received', summary.inputs.anomalies]);
  line(['Changes received during the day', summary.inputs.movements]);
  line(['Changes to earlier days (adjustments)', summary.inputs.adjustments]);
  line(['Pending at as-of', summary.inputs.pendingClosing]);
  line([]);

  line(['By status', 'Count', 'Amount (RM)', 'Add charges (RM)'], { bold: true });
  for (const status of STATUSES)
    line([status, ...totalCells(summary.byStatus[status]), rm(summary.addChargesSen[status])], {
      money: [3, 4],
    });
  const all = STATUSES.reduce(
    (t, s) => ({
      count: t.count + summary.byStatus[s].count,
      sumSen: t.sumSen + summary.byStatus[s].sumSen,
    }),
    { count: 0, sumSen: 0 },
  );
  const allCharges = STATUSES.reduce((sum, s) => sum + summary.addChargesSen[s], 0);
  line(['total', ...totalCells(all), rm(allCharges)], { bold: true, money: [3, 4] });
  line([]);

  // The name first (what an accountant reads), the code last (what the Transactions sheet filters on).
  const breakdown = (title: string, lines: BreakdownLine[], name: (key: string) => string) => {
    line(
      [
        title,
        'Count',
        'Amount (RM)',
        'Success',
        'Success (RM)',
        'Pending',
        'Pending (RM)',
        'Failed',
        'Failed (RM)',
        'Code',
      ],
      { bold: true },
    );
    for (const l of lines)
      line(
        [
          name(l.key),
          ...totalCells(l.all),
          ...totalCells(l.success),
          ...totalCells(l.pending),
          ...totalCells(l.failed),
          l.key,
        ],
        {
          money: [3, 5, 7, 9],
        },
      );
    line([]);
  };
  breakdown('By zakat type', summary.byType, typeName);
  breakdown('By state', summary.byState, stateName);
  breakdown('By channel', summary.byChannel, (key) => CHANNEL_LABEL[key as ReconChannel]);

  const roll = summary.pending;
  line(['Pending roll', 'Count', 'Amount (RM)'], { bold: true });
  line(['Opening (pending at the start of the day)', ...totalCells(roll.opening)], { money: [3] });
  line(['+ became pending', ...totalCells(roll.added)], { money: [3] });
  line(['- pending that succeeded', ...totalCells(roll.succeeded)], { money: [3] });
  line(['- pending that failed', ...totalCells(roll.failed)], { money: [3] });
  line(['+/- amount changes of pending items', ...totalCells(roll.amountChanges)], { money: [3] });
  line(['Closing (pending at as-of)', ...totalCells(roll.closing)], { bold: true, money: [3] });
  line(['Check: opening + movements = closing', roll.balances ? 'balances' : 'DOES NOT BALANCE'], {
    bold: true,
  });
  line([
    'Each version received is one movement: a posting that went pending and then succeeded during the day is counted in "+ became pending" and in "- pending that succeeded".',
  ]);
  line([]);
  line(['Adjustments to earlier days', 'Count', 'Change to collected (RM)'], { bold: true });
  line(
    [
      'Status changes and late arrivals',
      summary.adjustments.count,
      rm(summary.adjustments.collectedDeltaSen),
    ],
    {
      money: [3],
    },
  );
  sheet.commit();
}
