import { formatSen } from '../../core/money.ts';
import type { AcquirerBank } from '../../core/acquirer/types.ts';
import type { AgencyRow, OrderRow, PaymentMethod, SandboxPayment } from '../../core/store/index.ts';
import type { FieldError } from '../../schemas/index.ts';
import { html, type SafeHtml } from './html.ts';

export interface Page {
  title: string;
  body: SafeHtml;
  formAction?: string;
  refreshSeconds?: number;
}

const METHOD_LABELS: Record<PaymentMethod, string> = {
  fpx: 'FPX online banking',
  card: 'Credit or debit card',
  ewallet: 'E-wallet',
};

function summary(order: OrderRow, agencyName: string, addChargeSen?: number): SafeHtml {
  return html`<dl class="summary">
    <dt>Pay to</dt>
    <dd>${agencyName}</dd>
    <dt>Reference</dt>
    <dd>${order.refNo}</dd>
    <dt>Amount</dt>
    <dd>RM ${formatSen(order.amountSen)}</dd>
    ${
      addChargeSen !== undefined
        ? html`<dt>Add charge</dt>
            <dd>RM ${formatSen(addChargeSen)}</dd>
            <dt>Total</dt>
            <dd class="total">RM ${formatSen(order.amountSen + addChargeSen)}</dd>`
        : ''
    }
  </dl>`;
}

/** The hosted checkout: the order, and a choice of method (with its add charge) and FPX bank. */
export function checkoutPage(input: {
  order: OrderRow;
  agency: AgencyRow;
  methods: readonly { method: PaymentMethod; addChargeSen: number }[];
  banks: readonly AcquirerBank[];
  errors?: readonly FieldError[];
}): Page {
  const { order, agency } = input;
  return {
    title: `Pay ${agency.name}`,
    body: html`<h1>Pay ${agency.name}</h1>
      ${summary(order, agency.name)} ${input.errors?.length ? errorList(input.errors) : ''}
      <form method="post" action="/v2/checkout/${encodeURIComponent(order.orderNo)}/pay">
        <input type="hidden" name="t" value="${order.formToken ?? ''}" />
        ${radioGroup(
          'Payment method',
          'method',
          input.methods.map((m) => ({
            value: m.method,
            label: html`${METHOD_LABELS[m.method]}${
              m.addChargeSen > 0
                ? html` <span class="muted"
                    >(add charge RM ${formatSen(m.addChargeSen)}, total RM
                    ${formatSen(order.amountSen + m.addChargeSen)})</span
                  >`
                : ''
            }`,
          })),
        )}
        <label for="bank">FPX bank (for online banking)</label>
        <select id="bank" name="bank">
          <option value="">Choose your bank</option>
          ${input.banks.map((b) => html`<option value="${b.id}">${b.name}</option>`)}
        </select>
        <button type="submit">Pay now</button>
      </form>
      <p class="muted">Order ${order.orderNo}. A receipt goes to ${order.email}.</p>`,
  };
}

/** The pay page of a link or QR code: it asks for the payer's e-mail, then continues into checkout. */
export function payLinkPage(input: {
  agency: AgencyRow;
  category: string;
  refNo: string;
  amount: string;
  /** A signed link's extras, shown as they will be stored with the order. */
  extras?: Readonly<Record<string, string>>;
  action: string;
  errors?: readonly FieldError[];
}): Page {
  return {
    title: `Pay ${input.agency.name}`,
    body: html`<h1>Pay ${input.agency.name}</h1>
      <dl class="summary">
        <dt>Pay to</dt>
        <dd>${input.agency.name}</dd>
        <dt>For</dt>
        <dd>${input.category}</dd>
        <dt>Reference</dt>
        <dd>${input.refNo}</dd>
        <dt>Amount</dt>
        <dd>RM ${input.amount}</dd>
        ${Object.entries(input.extras ?? {}).map(
          ([key, value]) =>
            html`<dt>${key}</dt>
              <dd>${value}</dd>`,
        )}
      </dl>
      ${input.errors?.length ? errorList(input.errors) : ''}
      <form method="post" action="${input.action}">
        <label for="email">Your e-mail (the receipt goes here)</label>
        <input id="email" name="email" type="email" autocomplete="email" required />
        <button type="submit">Continue to payment</button>
      </form>`,
  };
}

/**
 * After payment: the indirect callback (section 6) as a form the browser posts to the merchant's
 * returnUrl: auto-submitted by our script, and a visible button for browsers without scripts.
 */
export function resultPage(
  order: OrderRow,
  agencyName: string,
  fields: Record<string, string> | undefined,
): Page {
  const paid = order.status === 'success';
  const heading = paid ? 'Payment successful' : 'Payment not successful';
  if (!order.returnUrl || !fields) {
    return {
      title: heading,
      body: html`<h1>${heading}</h1>
        ${summary(order, agencyName, order.addChargeSen)}
        <p>
          ${paid ? `A receipt is on its way to ${order.email}.` : 'No money was taken. You may try again with a new order.'}
        </p>`,
    };
  }
  return {
    title: heading,
    formAction: new URL(order.returnUrl).origin,
    body: html`<h1>${heading}</h1>
      ${summary(order, agencyName, order.addChargeSen)}
      <form id="callback-form" method="post" action="${order.returnUrl}">
        ${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
        <button type="submit">Return to ${agencyName}</button>
      </form>
      <p class="muted">Taking you back to ${agencyName}. If nothing happens, press the button.</p>
      <script src="/assets/autosubmit.js"></script>`,
  };
}

/** A payment the bank has not decided yet: the payer waits; the page looks again every 10 s. */
export function pendingPage(order: OrderRow, agencyName: string): Page {
  return {
    title: 'Payment pending',
    refreshSeconds: 10,
    body: html`<h1>Payment pending</h1>
      ${summary(order, agencyName, order.addChargeSen)}
      <p class="notice" role="status">
        Your bank has not confirmed this payment yet. Please do not pay again: this page checks again every 10
        seconds, and ${agencyName} is told as soon as the bank answers.
      </p>`,
  };
}

/** A refusal the payer can read (the API client gets the same as application/problem+json). */
export function errorPage(
  status: number,
  title: string,
  detail: string | undefined,
  errors: readonly FieldError[],
): Page {
  return {
    title,
    body: html`<h1>${title}</h1>
      <div class="error" role="alert">
        <p>${detail ?? ''}</p>
        ${errors.length ? errorItems(errors) : ''}
      </div>
      <p class="muted">Error ${status}. Please go back to the merchant and try again.</p>`,
  };
}

function errorList(errors: readonly FieldError[]): SafeHtml {
  return html`<div class="error" role="alert">
    <p>Please check:</p>
    ${errorItems(errors)}
  </div>`;
}

function errorItems(errors: readonly FieldError[]): SafeHtml {
  return html`<ul>
    ${errors.map((e) => html`<li><code>${e.pointer.slice(1) || 'order'}</code> ${e.message}</li>`)}
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
  payment: SandboxPayment,
  outcomes: readonly { code: string; label: string }[],
): Page {
  return {
    title: 'Sandbox bank',
    body: html`<h1>Sandbox bank</h1>
      <p class="notice">
        This is the sandbox acquirer, standing in for
        ${payment.method === 'fpx' ? `FPX bank ${payment.bankId ?? ''}` : payment.method}. No real money
        moves.
      </p>
      <dl class="summary">
        <dt>Order</dt>
        <dd>${payment.orderNo}</dd>
        <dt>Amount</dt>
        <dd>RM ${formatSen(payment.amountSen)}</dd>
        <dt>Status</dt>
        <dd>${payment.outcome === null ? 'awaiting your choice' : `pending (${payment.outcome})`}</dd>
      </dl>
      ${
        outcomes.length > 0
          ? html`<form method="post" action="/sandbox/${encodeURIComponent(payment.ref)}">
              ${radioGroup(
                payment.outcome === null ? 'Outcome of this payment' : 'Resolve the pending payment',
                'outcome',
                outcomes.map((o) => ({ value: o.code, label: o.label })),
              )}
              <button type="submit">Confirm</button>
            </form>`
          : html`<p>This payment is decided (${payment.outcome ?? ''}).</p>`
      }`,
  };
}
