import { formatSen } from '../../core/money.ts';
import type { ReconRunRow } from '../../core/store/index.ts';

interface Headline {
  success: { count: number; sumSen: number };
  pending: { count: number; sumSen: number };
  failed: { count: number; sumSen: number };
  pendingBalances: boolean;
  adjustments: { count: number; collectedDeltaSen: number };
}

/** The nightly e-mail: the day's headline totals in the body, the workbook attached. */
export function reconEmail(
  run: ReconRunRow,
  title: string,
  isTest: boolean,
): { subject: string; text: string } {
  const h = run.totals as Headline;
  const rm = (sen: number) => `RM ${formatSen(sen)}`;
  const what = isTest ? 'Bank live-test report' : 'Zakat reconciliation';
  const lines = [
    `${what} for ${title}, business day ${run.businessDate} (Asia/Kuala_Lumpur).`,
    '',
    `Collected (success): ${h.success.count} transaction(s), ${rm(h.success.sumSen)}`,
    `Pending at the cut-off: ${h.pending.count}, ${rm(h.pending.sumSen)}`,
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
