/** The callbacks page: deliveries by state, failing ones first, each attempt, and "redeliver" for admins. */
import { html, type SafeHtml } from '../../../core/html.ts';
import type { DashboardCallback } from '../../../core/store/index.ts';
import { agencyBase, klTime, pager, queryOf, statusBadge, table } from './format.ts';
import { postButton } from './payments.ts';

export const CALLBACK_STATES = ['failing', 'queued', 'delivered', 'superseded', 'gone', 'dead'] as const;
export type CallbackStateFilter = (typeof CALLBACK_STATES)[number];

const STATE_LABELS: Record<CallbackStateFilter, string> = {
  failing: 'Failing',
  queued: 'Queued',
  delivered: 'Delivered',
  superseded: 'Superseded',
  gone: 'Refused by the merchant',
  dead: 'Given up',
};

function lastAttempt(c: DashboardCallback): SafeHtml {
  const last = c.attemptLog.at(-1);
  if (!last) return html`not tried yet`;
  return html`${klTime(last.at)}: ${last.statusCode ?? last.error ?? '–'}, ${last.latencyMs} ms`;
}

/** The state links with their counts, and one page of callbacks with every attempt. */
export function callbacksBody(
  agency: string,
  state: CallbackStateFilter | undefined,
  data: {
    rows: DashboardCallback[];
    total: number;
    byState: Record<string, number>;
    page: number;
    size: number;
  },
  csrf: SafeHtml | null,
): SafeHtml {
  const base = agencyBase(agency);
  const path = `${base}/callbacks`;
  return html`<nav aria-label="Callback states" class="tabs">
      <ul>
        <li><a href="${path}" ${state === undefined ? html`aria-current="page"` : ''}>All</a></li>
        ${CALLBACK_STATES.map(
          (s) =>
            html`<li>
              <a href="${path}${queryOf({ state: s })}" ${s === state ? html`aria-current="page"` : ''}
                >${STATE_LABELS[s]} (${data.byState[s] ?? 0})</a
              >
            </li>`,
        )}
      </ul>
    </nav>
    ${table(
      state ? `Callbacks: ${STATE_LABELS[state]}` : 'Callbacks, failing first',
      ['Order', 'Status sent', 'State', 'Attempts', 'Last attempt', 'Receiver', 'Action'],
      data.rows.map(
        (c) =>
          html`<tr class="${c.failing ? 'failing' : ''}">
            <th scope="row"><a href="${base}/payments/${encodeURIComponent(c.orderNo)}">${c.orderNo}</a></th>
            <td>${c.status}</td>
            <td>${statusBadge(c.failing && c.state === 'queued' ? 'retrying' : c.state)}</td>
            <td class="num">${c.attempts}</td>
            <td>${lastAttempt(c)}</td>
            <td class="mono">${c.url}</td>
            <td>
              <details>
                <summary>Attempts</summary>
                <ol>
                  ${c.attemptLog.map(
                    (a) =>
                      html`<li>${klTime(a.at)}: ${a.statusCode ?? a.error ?? '–'}, ${a.latencyMs} ms</li>`,
                  )}
                </ol>
              </details>
              ${postButton(`${base}/payments/${encodeURIComponent(c.orderNo)}/redeliver`, `Redeliver ${c.orderNo}`, csrf)}
            </td>
          </tr>`,
      ),
    )}
    ${pager(path, { state }, data)}`;
}
