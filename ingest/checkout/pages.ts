import type { AcquirerBank } from '../../core/acquirer/types.ts';
import type { ErrorCode } from '../../core/errors.ts';
import { formatKl } from '../../core/time.ts';
import type { AgencyRow, OrderRow, PaymentMethod, SandboxPayment } from '../../core/store/index.ts';
import type { FieldError } from '../../schemas/index.ts';
import { html, type SafeHtml } from './html.ts';
import { formatKlWallTime, formatRinggit, messages, payerError, type Lang } from './i18n.ts';

export interface Page {
  title: string;
  body: SafeHtml;
  formAction?: string;
  refreshSeconds?: number;
}

/** How long a result page stays in view, with JavaScript on, before it posts the indirect callback. */
export const RESULT_VIEW_SECONDS = 5;

/** A category's name in the payer's language (the agency's setting), else its id. */
export function categoryName(agency: AgencyRow, category: string, lang: Lang): string {
  return agency.settings.categoryNames[category]?.[lang] ?? category;
}

function logo(agency: AgencyRow): SafeHtml | '' {
  return agency.settings.logo
    ? html`<img class="logo" src="/agency-logo/${encodeURIComponent(agency.code)}" alt="${agency.name}" />`
    : '';
}

function summary(
  lang: Lang,
  order: OrderRow,
  agency: AgencyRow,
  addChargeSen?: number,
  more: SafeHtml | '' = '',
): SafeHtml {
  const m = messages(lang);
  return html`<dl class="summary">
    <dt>${m.payTo}</dt>
    <dd>${agency.name}</dd>
    ${
      order.paymentCategory
        ? html`<dt>${m.for}</dt>
            <dd>${categoryName(agency, order.paymentCategory, lang)}</dd>`
        : ''
    }
    <dt>${m.reference}</dt>
    <dd>${order.refNo}</dd>
    <dt>${m.amount}</dt>
    <dd>${formatRinggit(order.amountSen)}</dd>
    ${
      addChargeSen !== undefined
        ? html`<dt>${m.addCharge}</dt>
            <dd>${formatRinggit(addChargeSen)}</dd>
            <dt>${m.total}</dt>
            <dd class="total">${formatRinggit(order.amountSen + addChargeSen)}</dd>`
        : ''
    }
    ${more}
  </dl>`;
}

/**
 * The hosted checkout: the order, and a choice of method (with its add charge). The FPX bank list sits
 * inside the FPX option, so it belongs to that choice with or without scripts (the stylesheet hides it
 * while another method is chosen).
 */
export function checkoutPage(
  lang: Lang,
  input: {
    order: OrderRow;
    agency: AgencyRow;
    methods: readonly { method: PaymentMethod; addChargeSen: number }[];
    banks: readonly AcquirerBank[];
    cancelHref?: string;
    errors?: readonly FieldError[];
  },
): Page {
  const m = messages(lang);
  const { order, agency } = input;
  const bankSelect = html`<span class="bank-choice">
    <label for="bank">${m.fpxBank}</label>
    <select id="bank" name="bank">
      <option value="">${m.chooseBank}</option>
      ${input.banks.map((b) => html`<option value="${b.id}">${b.label ?? b.name}</option>`)}
    </select>
  </span>`;
  return {
    title: m.payTitle(agency.name),
    body: html`${logo(agency)}
      <h1>${m.payTitle(agency.name)}</h1>
      ${summary(lang, order, agency)} ${input.errors?.length ? errorList(lang, input.errors) : ''}
      <form method="post" action="/v2/checkout/${encodeURIComponent(order.orderNo)}/pay">
        <input type="hidden" name="t" value="${order.formToken ?? ''}" />
        <fieldset>
          <legend>${m.method}</legend>
          ${input.methods.map(
            (o, i) =>
              html`<div class="option-group">
                <label class="option"
                  ><input
                    type="radio"
                    name="method"
                    value="${o.method}"
                    ${i === 0 ? html` checked` : ''}
                    required
                  />
                  <span
                    >${m.methods[o.method]}${
                      o.addChargeSen > 0
                        ? html` <span class="muted"
                            >${m.withCharge(
                              formatRinggit(o.addChargeSen),
                              formatRinggit(order.amountSen + o.addChargeSen),
                            )}</span
                          >`
                        : ''
                    }</span
                  ></label
                >
                ${o.method === 'fpx' ? bankSelect : ''}
              </div>`,
          )}
        </fieldset>
        <button type="submit">${m.payNow}</button>
      </form>
      <p class="muted">${m.orderNote(order.orderNo, order.email)}</p>
      ${input.cancelHref ? html`<p><a href="${input.cancelHref}">${m.cancel}</a></p>` : ''}`,
  };
}

/**
 * The pay page of a link or QR code: it asks for the payer's e-mail, then continues into checkout. A
 * once-link already paid never reaches it (the route says so first).
 */
export function payLinkPage(
  lang: Lang,
  input: {
    agency: AgencyRow;
    category: string;
    refNo: string;
    amountSen: number;
    /** A signed link's extras, shown as they will be stored with the order. */
    extras?: Readonly<Record<string, string>>;
    action: string;
    errors?: readonly FieldError[];
  },
): Page {
  const m = messages(lang);
  return {
    title: m.payTitle(input.agency.name),
    body: html`${logo(input.agency)}
      <h1>${m.payTitle(input.agency.name)}</h1>
      <dl class="summary">
        <dt>${m.payTo}</dt>
        <dd>${input.agency.name}</dd>
        <dt>${m.for}</dt>
        <dd>${categoryName(input.agency, input.category, lang)}</dd>
        <dt>${m.reference}</dt>
        <dd>${input.refNo}</dd>
        <dt>${m.amount}</dt>
        <dd>${formatRinggit(input.amountSen)}</dd>
        ${Object.entries(input.extras ?? {}).map(
          ([key, value]) =>
            html`<dt>${key}</dt>
              <dd>${value}</dd>`,
        )}
      </dl>
      ${
        input.errors?.length
          ? errorList(
              lang,
              input.errors.map((e) =>
                e.pointer === '/email' ? { pointer: '', message: m.emailInvalid } : e,
              ),
            )
          : ''
      }
      <form method="post" action="${input.action}">
        <label for="email">${m.emailLabel}</label>
        <input id="email" name="email" type="email" autocomplete="email" required />
        <button type="submit">${m.continue}</button>
      </form>`,
  };
}

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

/** Codes whose detail is written for payers (pay links, limits), shown under the plain message. */
const PAYER_DETAIL_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'not-found',
  'pay-link-tampered',
  'pay-link-in-progress',
  'too-many-requests',
]);

/**
 * A refusal the payer can read: what happened and what to do next, in plain words of their language
 * (the API client gets the same refusal as application/problem+json). Field errors are listed as they
 * are; the code and request id are there for whoever the payer asks for help.
 */
export function errorPage(
  lang: Lang,
  error: {
    code: ErrorCode;
    status: number;
    detail?: string;
    errors: readonly FieldError[];
    requestId: string;
  },
): Page {
  const m = messages(lang);
  const says = payerError(lang, error.code, error.status);
  const detail = PAYER_DETAIL_CODES.has(error.code) ? error.detail : undefined;
  return {
    title: error.code === 'not-found' ? m.notFoundTitle : m.errorTitle,
    body: html`<h1>${error.code === 'not-found' ? m.notFoundTitle : m.errorTitle}</h1>
      <div class="error" role="alert">
        <p>${says.what}</p>
        ${detail ? html`<p lang="en">${detail}</p>` : ''}
        ${error.errors.length ? errorItems(error.errors) : ''}
      </div>
      <p>${says.next}</p>
      <p class="muted">${m.supportRef(`${error.status} ${error.code}`, error.requestId || '-')}</p>`,
  };
}

function errorList(lang: Lang, errors: readonly FieldError[]): SafeHtml {
  return html`<div class="error" role="alert">
    <p>${messages(lang).pleaseCheck}</p>
    ${errorItems(errors)}
  </div>`;
}

function errorItems(errors: readonly FieldError[]): SafeHtml {
  return html`<ul>
    ${errors.map((e) =>
      e.pointer === ''
        ? html`<li>${e.message}</li>`
        : html`<li><code>${e.pointer.slice(1)}</code> ${e.message}</li>`,
    )}
  </ul>`;
}

/** A required choice of one, the first option picked; each radio sits inside its label. */
function radioGroup(
  legend: string,
  name: string,
  options: readonly { value: string; label: SafeHtml | string }[],
): SafeHtml {
  return html`<fieldset>
    <legend>${legend}</legend>
    ${options.map(
      (o, i) =>
        html`<label class="option"
          ><input type="radio" name="${name}" value="${o.value}" ${i === 0 ? html` checked` : ''} required />
          <span>${o.label}</span></label
        >`,
    )}
  </fieldset>`;
}

/** The sandbox bank's page: pick the outcome of a payment, or resolve one left pending. */
export function sandboxBankPage(
  lang: Lang,
  payment: SandboxPayment,
  bank: AcquirerBank | undefined,
  outcomes: readonly { code: string; label: string }[],
): Page {
  const m = messages(lang);
  const standIn =
    payment.method === 'fpx'
      ? (bank?.name ?? payment.bankId ?? 'FPX')
      : (m.methods[payment.method as PaymentMethod] ?? payment.method);
  return {
    title: m.sandboxTitle,
    body: html`<h1>${m.sandboxTitle}</h1>
      <p class="notice">${m.sandboxNote(standIn)}</p>
      <dl class="summary">
        <dt>${m.orderNo}</dt>
        <dd>${payment.orderNo}</dd>
        <dt>${m.amount}</dt>
        <dd>${formatRinggit(payment.amountSen)}</dd>
        <dt>${m.status}</dt>
        <dd>${payment.outcome === null ? m.sandboxAwaiting : m.sandboxPendingAs(payment.outcome)}</dd>
      </dl>
      ${
        outcomes.length > 0
          ? html`<form method="post" action="/sandbox/${encodeURIComponent(payment.ref)}">
              ${radioGroup(
                payment.outcome === null ? m.sandboxPick : m.sandboxResolve,
                'outcome',
                outcomes.map((o) => ({ value: o.code, label: m.sandboxOutcomes[o.code] ?? o.label })),
              )}
              <button type="submit">${m.confirm}</button>
            </form>`
          : html`<p>${m.sandboxDecided(payment.outcome ?? '')}</p>`
      }
      ${
        outcomes.some((o) => o.code === 'BC')
          ? html`<form method="post" action="/sandbox/${encodeURIComponent(payment.ref)}">
              <input type="hidden" name="outcome" value="BC" />
              <button type="submit" class="secondary">${m.cancel}</button>
            </form>`
          : ''
      }`,
  };
}
