/** The overview: how today and yesterday went, what needs attention, and the last 30 days. */
import { html, type SafeHtml } from '../../../core/html.ts';
import type { DashboardOverview, DashboardRun, DayFigures } from '../../../core/store/index.ts';
import { collectionsChart } from './chart.ts';
import { agencyBase, klTime, queryOf, rm, table } from './format.ts';

/** What the mail column says of a run. */
export function mailText(run: DashboardRun): string {
  switch (run.mail) {
    case 'sent':
      return 'mailed';
    case 'failed':
      return 'mail failed (retrying)';
    case 'queued':
      return 'mail queued';
    case 'not-mailed':
      return 'not mailed';
  }
}

function dayCard(title: string, day: DayFigures | undefined): SafeHtml {
  if (!day) return html``;
  return html`<section class="card" aria-labelledby="card-${day.day}">
    <h2 id="card-${day.day}">${title} <small>${day.day}</small></h2>
    <dl>
      <dt>Collected</dt>
      <dd>
        ${rm(day.collected.sumSen)}
        <small>(${day.collected.count} ${day.collected.count === 1 ? 'payment' : 'payments'})</small>
      </dd>
      <dt>Pending</dt>
      <dd>${day.pending}</dd>
      <dt>Failed</dt>
      <dd>${day.failed}</dd>
    </dl>
  </section>`;
}

/** The overview body for an agency; `today` is the UTC+8 business day the page is read on. */
export function overviewBody(agency: string, today: string, data: DashboardOverview): SafeHtml {
  const base = agencyBase(agency);
  const byDay = new Map(data.days.map((d) => [d.day, d]));
  const yesterday = data.days.at(-2)?.day ?? '';
  const exceptions = data.days.reduce((n, d) => n + d.exceptions, 0);
  const run = data.lastNightly;
  const first = data.days[0]?.day ?? today;
  return html`<div class="cards">
      ${dayCard('Today', byDay.get(today))} ${dayCard('Yesterday', byDay.get(yesterday))}
      <section class="card" aria-labelledby="card-attention">
        <h2 id="card-attention">Needs attention</h2>
        <dl>
          <dt>Callbacks failing</dt>
          <dd><a href="${base}/callbacks?state=failing">${data.callbacksFailing}</a></dd>
          <dt>Postings with exceptions (30 days)</dt>
          <dd>
            <a href="${base}/postings${queryOf({ start: first, end: today, code: 'any' })}">${exceptions}</a>
          </dd>
          <dt>Open anomalies</dt>
          <dd>${data.openAnomalies}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="card-nightly">
        <h2 id="card-nightly">Last nightly run</h2>
        ${
          run
            ? html`<dl>
                <dt>Business day</dt>
                <dd><a href="${base}/reconciliation/${run.id}">${run.businessDate}</a></dd>
                <dt>Finished</dt>
                <dd>${klTime(run.finishedAt)}</dd>
                <dt>E-mail</dt>
                <dd>${mailText(run)}${run.mailedAt ? html` ${klTime(run.mailedAt)}` : ''}</dd>
              </dl>`
            : html`<p>No nightly run yet.</p>`
        }
      </section>
    </div>
    ${collectionsChart(data.days)}
    <details>
      <summary>The last ${data.days.length} days as a table</summary>
      ${table(
        'Collections per day',
        ['Day', 'Collected', 'Payments', 'Pending', 'Failed', 'Exceptions'],
        [...data.days].reverse().map(
          (d) =>
            html`<tr>
              <th scope="row">${d.day}</th>
              <td class="num">${rm(d.collected.sumSen)}</td>
              <td class="num">${d.collected.count}</td>
              <td class="num">${d.pending}</td>
              <td class="num">${d.failed}</td>
              <td class="num">${d.exceptions}</td>
            </tr>`,
        ),
      )}
    </details>`;
}
