import { escapeHtml } from '../../core/html.ts';
import { formatRinggit } from '../../core/money.ts';
import { formatKl } from '../../core/time.ts';
import type { ReconRunRow } from '../../core/store/index.ts';
import type { Headline, Total } from './summary.ts';

/** The nightly e-mail's parts: nodemailer builds the MIME (text and HTML alternatives, the attachment). */
export interface ReconEmail {
  subject: string;
  text: string;
  html: string;
}

const rm = formatRinggit;
const escape = escapeHtml;

/** One figure of the headline: a label, and the figure (with the earlier run's when it changed). */
interface Figure {
  label: string;
  now: string;
  before?: string;
}

const counted = (t: Total) => `${t.count}, ${rm(t.sumSen)}`;

function figures(h: Headline, before: Headline | undefined): Figure[] {
  const line = (label: string, now: string, was: string | undefined): Figure =>
    was === undefined || was === now ? { label, now } : { label, now, before: was };
  return [
    line(
      'Collected (success)',
      `${h.success.count} transaction(s), ${rm(h.success.sumSen)}`,
      before && `${before.success.count} transaction(s), ${rm(before.success.sumSen)}`,
    ),
    line('Still pending', counted(h.pending), before && counted(before.pending)),
    line('Failed', counted(h.failed), before && counted(before.failed)),
    line(
      'Adjustments to earlier days',
      `${h.adjustments.count}, change to collected ${rm(h.adjustments.collectedDeltaSen)}`,
      before &&
        `${before.adjustments.count}, change to collected ${rm(before.adjustments.collectedDeltaSen)}`,
    ),
    line(
      'Pending roll (opening + movements = closing)',
      h.pendingBalances ? 'balances' : 'DOES NOT BALANCE',
      before && (before.pendingBalances ? 'balances' : 'DOES NOT BALANCE'),
    ),
  ];
}

/**
 * The run's e-mail: the day's headline totals in the body (text and HTML), the workbook attached. A later
 * run of the same day is marked in its subject as a correction of the earlier run's e-mail (or as an
 * unchanged re-run) and says what changed: the headline figures before and after, and the cells.
 */
export function reconEmail(
  run: ReconRunRow,
  title: string,
  isTest: boolean,
  previous?: ReconRunRow,
): ReconEmail {
  const h = run.totals as Headline;
  const what = isTest ? 'Bank live-test report' : 'Zakat reconciliation';
  const base = `${what} ${run.businessDate}: ${title}`;
  const [summaryLine = '', ...cellLines] = (run.changes ?? '').split('\n').filter((l) => l !== '');
  const rerun = run.previousRun !== null;
  const unchanged =
    rerun && (previous ? previous.fingerprint === run.fingerprint : /^the same/.test(summaryLine));
  const before = rerun && !unchanged ? (previous?.totals as Headline | undefined) : undefined;
  const subject = !rerun
    ? base
    : unchanged
      ? `Re-run, no change: ${base} (same figures as run ${run.previousRun})`
      : `Correction: ${base} (replaces run ${run.previousRun})`;

  const intro = [
    `${what} for ${title}, business day ${run.businessDate} (Asia/Kuala_Lumpur),`,
    `as of ${formatKl(new Date(run.asOf))} (UTC+8).`,
  ];
  const notice = !rerun
    ? []
    : unchanged
      ? [
          `This is a re-run of run ${run.previousRun}: the same records and totals; only the as-of time differs. Nothing needs correcting.`,
        ]
      : [
          `This e-mail corrects the workbook of run ${run.previousRun}, sent earlier for the same day: use the attached workbook instead.`,
        ];
  const cellCount = /: (\d+) cell\(s\)$/.exec(summaryLine)?.[1];
  const changed =
    rerun && !unchanged
      ? [
          cellCount === undefined
            ? `What changed: ${summaryLine}.`
            : `What changed: ${cellCount} cell(s) differ from run ${run.previousRun}'s workbook${
                cellLines.length < Number(cellCount) ? `; ${cellLines.length} of them:` : ':'
              }`,
          ...cellLines,
        ]
      : [];
  const list = figures(h, before);
  const figureText = (f: Figure) => `${f.label}: ${f.now}${f.before ? ` (was ${f.before})` : ''}`;
  const closing = [
    `Run ${run.id}, workbook SHA-256 ${run.fileSha256}.`,
    'The attached workbook has the Summary, Transactions, Exceptions, Pending and Adjustments sheets.',
  ];

  const text = [
    ...(notice.length > 0 ? [...notice, ''] : []),
    ...intro,
    '',
    ...list.map(figureText),
    ...(changed.length > 0 ? ['', changed[0]!, ...changed.slice(1).map((l) => `  ${l}`)] : []),
    '',
    ...closing,
  ];

  const td = 'style="padding:4px 12px 4px 0;border-bottom:1px solid #ddd;text-align:left"';
  const html = [
    '<!doctype html><html><body style="font-family:Arial,Helvetica,sans-serif;font-size:14px;color:#222">',
    ...notice.map(
      (n) =>
        `<p style="padding:8px;background:#fff4d6;border:1px solid #e0b84c"><strong>${escape(n)}</strong></p>`,
    ),
    `<p>${escape(intro.join(' '))}</p>`,
    `<table style="border-collapse:collapse">${list
      .map(
        (f) =>
          `<tr><th ${td}>${escape(f.label)}</th><td ${td}>${escape(f.now)}${
            f.before ? ` <span style="color:#666">(was ${escape(f.before)})</span>` : ''
          }</td></tr>`,
      )
      .join('')}</table>`,
    ...(changed.length > 0
      ? [
          `<p>${escape(changed[0]!)}</p>`,
          `<ul>${changed
            .slice(1)
            .map((l) => `<li><code>${escape(l)}</code></li>`)
            .join('')}</ul>`,
        ]
      : []),
    ...closing.map((l) => `<p style="color:#666">${escape(l)}</p>`),
    '</body></html>',
  ].join('\n');
  return { subject, text: `${text.join('\n')}\n`, html: `${html}\n` };
}
