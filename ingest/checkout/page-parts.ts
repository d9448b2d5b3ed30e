/** What the payer pages share: the page shape, the agency's logo, the order summary, errors, choices. */
import type { AgencyRow, OrderRow } from '../../core/store/index.ts';
import type { FieldError } from '../../schemas/index.ts';
import { html, type SafeHtml } from './html.ts';
import { formatRinggit, messages, type Lang } from './i18n.ts';

export interface Page {
  title: string;
  body: SafeHtml;
  formAction?: string;
  refreshSeconds?: number;
}

/** A category's name in the payer's language (the agency's setting), else its id. */
export function categoryName(agency: AgencyRow, category: string, lang: Lang): string {
  return agency.settings.categoryNames[category]?.[lang] ?? category;
}

/**
 * The agency's logo, when it has one (served by us: payer pages load nothing from elsewhere). Its address
 * names the image's hash: browsers and caches keep a logo a day by its address, so a replaced logo gets
 * a new one and shows on the next page (pages themselves are never cached).
 */
export function logo(agency: AgencyRow): SafeHtml | '' {
  const image = agency.settings.logo;
  if (!image) return '';
  const src = `/agency-logo/${encodeURIComponent(agency.code)}?v=${image.sha256.slice(0, 16)}`;
  return html`<img class="logo" src="${src}" alt="${agency.name}" />`;
}

/** The order as the payer checks it: to whom, for what, the reference and the amount (and its charge). */
export function summary(
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

/** The field errors of a form the payer sent, to correct it. */
export function errorList(lang: Lang, errors: readonly FieldError[]): SafeHtml {
  return html`<div class="error" role="alert">
    <p>${messages(lang).pleaseCheck}</p>
    ${errorItems(errors)}
  </div>`;
}

/** Field errors as a list, each named by its field. */
export function errorItems(errors: readonly FieldError[]): SafeHtml {
  return html`<ul>
    ${errors.map((e) =>
      e.pointer === ''
        ? html`<li>${e.message}</li>`
        : html`<li><code>${e.pointer.slice(1)}</code> ${e.message}</li>`,
    )}
  </ul>`;
}

/** A required choice of one, the first option picked; each radio sits inside its label. */
export function radioGroup(
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
