import { formatSen } from '../../core/money.ts';
import { formatKl } from '../../core/time.ts';
import type { ReconRunRow } from '../../core/store/index.ts';
import type { Headline } from './summary.ts';

/** The nightly e-mail: the day's headline totals in the body, the workbook attached. */
export function reconEmail(
  run: ReconRunRow,
  title: string,
  isTest: boolean,
): { subject: string; text: string } {
  const h = run.totals as Headline;
  // Ringgit with thousands separators, from sen (formatSen gives the plain two decimals).
  const rm = (sen: number) => `RM ${formatSen(sen).replace(/\B(?=(\d{3})+(?!\d))(?=\d*\.)/g, ',')}`;
  const what = isTest ? 'Bank live-test report' : 'Zakat reconciliation';
  const lines = [
    `${what} for ${title}, business day ${run.businessDate} (Asia/Kuala_Lumpur),`,
    `as of ${formatKl(new Date(run.asOf))} (UTC+8).`,
    '',
    `Collected (success): ${h.success.count} transaction(s), ${rm(h.success.sumSen)}`,
    `Still pending: ${h.pending.count}, ${rm(h.pending.sumSen)}`,
    `Failed: ${h.failed.count}, ${rm(h.failed.sumSen)}`,
    `Adjustments to earlier days: ${h.adjustments.count}, change to collected ${rm(h.adjustments.collectedDeltaSen)}`,
    `Pending roll (opening + movements = closing): ${h.pendingBalances ? 'balances' : 'DOES NOT BALANCE'}`,
    '',
    `Run ${run.id}, workbook SHA-256 ${run.fileSha256}.`,
    ...(run.changes ? ['', `This is a re-run: ${run.changes.split('\n')[0]}.`] : []),
    '',
    'The attached workbook has the Summary, Transactions, Exceptions, Pending and Adjustments sheets.',
  ];
  return { subject: `${what} ${run.businessDate}: ${title}`, text: `${lines.join('\n')}\n` };
}
