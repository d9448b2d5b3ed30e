/** The reconciliation pages: the runs per day, and one run with its totals, what changed and its e-mail. */
import path from 'node:path';
import { html, type SafeHtml } from '../../../core/html.ts';
import type { DashboardRun } from '../../../core/store/index.ts';
import type { Headline } from '../../reconciliation/summary.ts';
import { agencyBase, field, klTime, rm, table } from './format.ts';
import { mailText } from './overview.ts';
import { postButton } from './payments.ts';

const headlineOf = (run: DashboardRun) => run.totals as Headline;

/** Runs newest day first, each with its collected total, its e-mail and its workbook. */
export function runsBody(
  agency: string,
  query: { start?: string; end?: string },
  runs: DashboardRun[],
): SafeHtml {
  const base = `${agencyBase(agency)}/reconciliation`;
  return html`<form method="get" action="${base}" class="filters" aria-label="Filter runs">
      ${field('From (UTC+8)', 'start', query.start, { type: 'date' })}
      ${field('To (UTC+8)', 'end', query.end, { type: 'date' })}
      <p><button type="submit">Filter</button></p>
    </form>
    ${table(
      'Reconciliation runs, newest day first',
      [
        'Business day',
        'Run',
        'Trigger',
        'Finished (UTC+8)',
        'Collected',
        'Pending roll',
        'E-mail',
        'Workbook',
      ],
      runs.map((run) => {
        const h = headlineOf(run);
        return html`<tr>
          <th scope="row">${run.businessDate}</th>
          <td>
            <a href="${base}/${run.id}">Run ${run.id}</a>${run.changes ? html` <small>(changed)</small>` : ''}
          </td>
          <td>${run.trigger}</td>
          <td>${klTime(run.finishedAt)}</td>
          <td class="num">${rm(h.success.sumSen)}</td>
          <td>${h.pendingBalances ? 'balances' : 'does not balance'}</td>
          <td>${mailText(run)}</td>
          <td><a href="${base}/${run.id}/workbook" download>${path.basename(run.file)}</a></td>
        </tr>`;
      }),
    )}`;
}

/** One run: its totals, what changed since the day's previous run, its e-mail, download and re-mail. */
export function runBody(agency: string, run: DashboardRun, csrf: SafeHtml | null): SafeHtml {
  const base = `${agencyBase(agency)}/reconciliation`;
  const h = headlineOf(run);
  return html`<p><a href="${base}">Back to runs</a></p>
    <dl class="facts">
      <dt>Business day</dt>
      <dd>${run.businessDate}</dd>
      <dt>Trigger</dt>
      <dd>${run.trigger}</dd>
      <dt>Read as of (UTC+8)</dt>
      <dd>${klTime(run.asOf)}</dd>
      <dt>Finished (UTC+8)</dt>
      <dd>${klTime(run.finishedAt)}</dd>
      <dt>E-mail</dt>
      <dd>${mailText(run)}${run.mailedAt ? html` ${klTime(run.mailedAt)}` : ''}</dd>
      <dt>Workbook</dt>
      <dd>
        <a href="${base}/${run.id}/workbook" download>${path.basename(run.file)}</a>
        <small>(SHA-256 <code class="mono">${run.fileSha256}</code>)</small>
      </dd>
    </dl>
    ${postButton(`${base}/${run.id}/remail`, 'E-mail this workbook again', csrf)}
    ${table(
      'Totals of the day',
      ['', 'Count', 'Amount'],
      [
        ['Collected (success)', h.success],
        ['Pending', h.pending],
        ['Failed', h.failed],
      ].map(
        ([label, t]) =>
          html`<tr>
            <th scope="row">${label as string}</th>
            <td class="num">${(t as Headline['success']).count}</td>
            <td class="num">${rm((t as Headline['success']).sumSen)}</td>
          </tr>`,
      ),
    )}
    <p>
      Pending roll: ${h.pendingBalances ? 'balances' : 'does not balance'}. Adjustments of earlier days:
      ${h.adjustments.count}, changing their collected total by ${rm(h.adjustments.collectedDeltaSen)}.
    </p>
    <h2>What changed</h2>
    ${
      run.previousRun === null
        ? html`<p>This is the first run of the day.</p>`
        : html`<p>Since <a href="${base}/${run.previousRun}">run ${run.previousRun}</a> of the same day:</p>
            <pre class="changes">${run.changes ?? 'Nothing changed.'}</pre>`
    }`;
}
