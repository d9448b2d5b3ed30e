import type { AcquirerBank } from '../../core/acquirer/types.ts';
import type { PaymentMethod, SandboxPayment } from '../../core/store/index.ts';
import { html } from './html.ts';
import { formatRinggit, messages, type Lang } from './i18n.ts';
import { radioGroup, type Page } from './page-parts.ts';

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
