/** The payer's pages after payment: the bank's decision as a receipt, or the wait while it decides. */
import type { AgencyRow, OrderRow } from '../../core/store/index.ts';
import { formatKl } from '../../core/time.ts';
import { html, type SafeHtml } from './html.ts';
import { formatKlWallTime, messages, type Lang } from './i18n.ts';
import { logo, summary, type Page } from './page-parts.ts';

/** How long a result page stays in view, with JavaScript on, before it posts the indirect callback. */
export const RESULT_VIEW_SECONDS = 5;

/** The rows a result page adds to the summary: FPX receipt fields, the time in UTC+8. */
function receipt(lang: Lang, order: OrderRow): SafeHtml {
  const m = messages(lang);
  const status =
    order.status === 'success'
      ? m.statusSuccess
      : order.status === 'failed'
        ? m.statusFailed
        : m.statusPending;
  const time = order.fpxTxnTime ?? formatKl(new Date(order.updatedAt));
  return html`
    <dt>${m.status}</dt>
    <dd>${status}</dd>
    <dt>${m.orderNo}</dt>
    <dd>${order.orderNo}</dd>
    ${
      order.paymentMethod
        ? html`<dt>${m.method}</dt>
            <dd>${m.methods[order.paymentMethod]}</dd>`
        : ''
    }
    ${
      order.bankName
        ? html`<dt>${m.bank}</dt>
            <dd>${order.bankName}</dd>`
        : ''
    }
    ${
      order.fpxTxnId
        ? html`<dt>${m.txnId}</dt>
            <dd>${order.fpxTxnId}</dd>`
        : ''
    }
    <dt>${m.time}</dt>
    <dd>${formatKlWallTime(lang, time)} (UTC+8)</dd>
  `;
}

/**
 * After payment: what the bank decided, as an FPX receipt page. With a merchant's returnUrl, the indirect
 * callback (section 6) is a form the browser posts there: our script sends it after a few seconds (the
 * payer reads the result first), and its visible button does the same at once, or without scripts. A
 * refusal says why, and how to try again: a pay link's own page, or back to the merchant.
 */
export function resultPage(
  lang: Lang,
  input: { order: OrderRow; agency: AgencyRow; fields: Record<string, string> | undefined },
): Page {
  const m = messages(lang);
  const { order, agency, fields } = input;
  const paid = order.status === 'success';
  const heading = paid ? m.success : m.failed;
  const reason = paid ? '' : (m.reasons[order.debitAuthCode ?? ''] ?? m.reasons.other ?? '');
  const outcome = paid
    ? html`<p class="notice" role="status">${m.receiptSent(order.email)}</p>`
    : html`<div class="error" role="alert">
        <p>${reason}</p>
        <p>${m.noMoneyTaken}</p>
      </div>`;
  const top = html`${logo(agency)}
    <h1>${heading}</h1>
    ${outcome} ${summary(lang, order, agency, order.addChargeSen, receipt(lang, order))}`;
  const payLinkAgain =
    !paid && order.payLink
      ? html`<h2>${m.tryAgain}</h2>
          <p><a class="button" href="${order.payLink}">${m.tryAgainLink}</a></p>`
      : '';
  if (!order.returnUrl || !fields) {
    return { title: heading, body: html`${top} ${payLinkAgain}` };
  }
  return {
    title: heading,
    formAction: new URL(order.returnUrl).origin,
    body: html`${top} ${payLinkAgain}
      ${
        paid
          ? ''
          : html`<h2>${m.tryAgain}</h2>
              <p>${m.tryAgainMerchant(agency.name)}</p>`
      }
      <form id="callback-form" method="post" action="${order.returnUrl}" data-delay="${RESULT_VIEW_SECONDS}">
        ${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
        <button type="submit">${m.returnTo(agency.name)}</button>
      </form>
      <p class="muted" id="return-note" data-js="${m.returningIn(agency.name, RESULT_VIEW_SECONDS)}">
        ${m.returnNoScript(agency.name)}
      </p>
      <script src="/assets/autosubmit.js"></script>`,
  };
}

/** A payment the bank has not decided yet: the payer waits; the page looks again every 10 s. */
export function pendingPage(lang: Lang, order: OrderRow, agency: AgencyRow): Page {
  const m = messages(lang);
  return {
    title: m.pending,
    refreshSeconds: 10,
    body: html`${logo(agency)}
      <h1>${m.pending}</h1>
      ${summary(lang, order, agency, order.addChargeSen, receipt(lang, order))}
      <p class="notice" role="status">${m.pendingNote(agency.name)}</p>`,
  };
}
