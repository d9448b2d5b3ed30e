/** The payments page (the payment report with its filters) and one order's page. */
import { html, type SafeHtml } from '../../../core/html.ts';
import type { CallbackAttempt, CallbackRow, PaymentEvent, PaymentRow } from '../../../core/store/index.ts';
import { agencyBase, field, klTime, pager, queryOf, rm, select, statusBadge, table } from './format.ts';

/** The payment filters as the form and the links carry them (all text; validated by the handler). */
export interface PaymentQuery {
  start: string;
  end: string;
  approved?: string;
  order?: string;
  ref?: string;
  method?: string;
}

export const METHODS = [
  ['fpx', 'FPX'],
  ['card', 'Card'],
  ['ewallet', 'E-wallet'],
] as const;

const filterValues = (q: PaymentQuery) => ({
  start: q.start,
  end: q.end,
  approved: q.approved,
  order: q.order,
  ref: q.ref,
  method: q.method,
});

/** The filter form, the export links and one page of payments. */
export function paymentsBody(
  agency: string,
  query: PaymentQuery,
  page: { rows: PaymentRow[]; total: number; page: number; size: number },
): SafeHtml {
  const base = `${agencyBase(agency)}/payments`;
  const values = filterValues(query);
  return html`<form method="get" action="${base}" class="filters" aria-label="Filter payments">
      ${field('From (UTC+8)', 'start', query.start, { type: 'date' })}
      ${field('To (UTC+8)', 'end', query.end, { type: 'date' })}
      ${select('Approved', 'approved', query.approved, [
        ['1', 'Approved'],
        ['0', 'Not approved'],
      ])}
      ${field('Order number', 'order', query.order)} ${field('refNo', 'ref', query.ref)}
      ${select('Method', 'method', query.method, METHODS)}
      <p><button type="submit">Filter</button></p>
    </form>
    <p class="exports">
      Export these rows: <a href="${base}/export.csv${queryOf(values)}" download>CSV</a>
      <a href="${base}/export.xlsx${queryOf(values)}" download>Excel</a>
    </p>
    ${table(
      `Payments from ${query.start} to ${query.end}`,
      ['Order', 'Created (UTC+8)', 'refNo', 'Amount', 'Charge', 'Method', 'Status', 'Auth code'],
      page.rows.map(
        (p) =>
          html`<tr>
            <th scope="row"><a href="${base}/${encodeURIComponent(p.orderNo)}">${p.orderNo}</a></th>
            <td>${klTime(p.createdAt)}</td>
            <td>${p.refNo}</td>
            <td class="num">${rm(p.amountSen)}</td>
            <td class="num">${rm(p.addChargeSen)}</td>
            <td>${p.paymentMethod ?? '–'}</td>
            <td>${statusBadge(p.status)}</td>
            <td>${p.debitAuthCode ?? ''}</td>
          </tr>`,
      ),
    )}
    ${pager(base, values, page)}`;
}

type OrderCallback = CallbackRow & { attemptLog: CallbackAttempt[] };

/** Attempts of one callback: time, HTTP status (or the error), latency. */
export function attemptsTable(caption: string, attempts: readonly CallbackAttempt[]): SafeHtml {
  return table(
    caption,
    ['Attempt', 'Time (UTC+8)', 'HTTP status', 'Latency', 'Error'],
    attempts.map(
      (a, i) =>
        html`<tr>
          <th scope="row">${i + 1}</th>
          <td>${klTime(a.at)}</td>
          <td>${a.statusCode ?? '–'}</td>
          <td class="num">${a.latencyMs} ms</td>
          <td>${a.error ?? ''}</td>
        </tr>`,
    ),
  );
}

/** A POST form with its CSRF field and one button; nothing for a viewer (csrf null). */
export function postButton(action: string, label: string, csrf: SafeHtml | null): SafeHtml {
  if (!csrf) return html``;
  return html`<form method="post" action="${action}" class="inline">
    ${csrf}<button type="submit">${label}</button>
  </form>`;
}

/** One order: its fields, every status it went through, and every callback with each attempt. */
export function orderBody(
  agency: string,
  order: PaymentRow & { events: PaymentEvent[]; callbacks: OrderCallback[] },
  csrf: SafeHtml | null,
): SafeHtml {
  const base = agencyBase(agency);
  const path = `${base}/payments/${encodeURIComponent(order.orderNo)}`;
  return html`<p><a href="${base}/payments">Back to payments</a></p>
    <dl class="facts">
      <dt>Order number</dt>
      <dd>${order.orderNo}</dd>
      <dt>refNo</dt>
      <dd>${order.refNo}</dd>
      <dt>Status</dt>
      <dd>${statusBadge(order.status)}</dd>
      <dt>Amount</dt>
      <dd>${rm(order.amountSen)} (charge ${rm(order.addChargeSen)})</dd>
      <dt>Method</dt>
      <dd>${order.paymentMethod ?? '–'}</dd>
      <dt>Created (UTC+8)</dt>
      <dd>${klTime(order.createdAt)}</dd>
      <dt>Payer e-mail</dt>
      <dd>${order.email}</dd>
      <dt>FPX transaction</dt>
      <dd>${order.fpxTxnId ?? '–'}</dd>
      <dt>Source</dt>
      <dd>${order.source}${order.payLink ? html` (${order.payLink})` : ''}</dd>
    </dl>
    ${table(
      'Status history',
      ['Time (UTC+8)', 'Status', 'Auth code', 'Source'],
      order.events.map(
        (e) =>
          html`<tr>
            <th scope="row">${klTime(e.at)}</th>
            <td>${statusBadge(e.status)}</td>
            <td>${e.debitAuthCode ?? ''}</td>
            <td>${e.source}</td>
          </tr>`,
      ),
    )}
    <h2>Callbacks</h2>
    ${
      order.callbacks.length === 0
        ? html`<p>No callback for this order (a pay-link payment has no merchant to call).</p>`
        : html`${postButton(`${path}/redeliver`, 'Redeliver the latest callback', csrf)}
          ${order.callbacks.map(
            (c) =>
              html`<section aria-labelledby="cb-${c.id}">
                <h3 id="cb-${c.id}">Callback ${c.id}: ${c.status}, ${c.state}</h3>
                <p>To <span class="mono">${c.url}</span>, queued ${klTime(c.createdAt)}</p>
                ${attemptsTable(`Attempts of callback ${c.id}`, c.attemptLog)}
              </section>`,
          )}`
    }`;
}
