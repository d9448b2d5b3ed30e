/** The payer's pages before payment (checkout, a pay link's page) and the page of any refusal. */
import type { ErrorCode } from '../../core/errors.ts';
import type { AgencyRow, OrderRow, PaymentMethod } from '../../core/store/index.ts';
import type { AcquirerBank } from '../../core/acquirer/types.ts';
import type { FieldError } from '../../schemas/index.ts';
import { html, type SafeHtml } from './html.ts';
import { formatRinggit, messages, payerError, type Lang } from './i18n.ts';
import { categoryName, errorItems, errorList, logo, summary, type Page } from './page-parts.ts';

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
  const bankSelect = bankChoice(lang, input.banks);
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

// The bank list is the same for every order of an acquirer: rendered once per list and language.
const bankChoices = new WeakMap<readonly AcquirerBank[], Map<Lang, SafeHtml>>();

function bankChoice(lang: Lang, banks: readonly AcquirerBank[]): SafeHtml {
  let byLang = bankChoices.get(banks);
  if (!byLang) {
    byLang = new Map();
    bankChoices.set(banks, byLang);
  }
  let rendered = byLang.get(lang);
  if (!rendered) {
    const m = messages(lang);
    rendered = html`<span class="bank-choice">
      <label for="bank">${m.fpxBank}</label>
      <select id="bank" name="bank">
        <option value="">${m.chooseBank}</option>
        ${banks.map((b) => html`<option value="${b.id}">${b.label ?? b.name}</option>`)}
      </select>
    </span>`;
    byLang.set(lang, rendered);
  }
  return rendered;
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
