/** Small pieces every dashboard page is made of: money, times, tables, pagers, filter fields. */
import { html, type SafeHtml } from '../../../core/html.ts';
import { formatRinggit } from '../../../core/money.ts';
import { formatKl } from '../../../core/time.ts';

/** Sen as the pages show it: `RM 1,234.50`. */
export const rm = (sen: number): string => formatRinggit(sen);

/** A stored UTC instant as Kuala Lumpur wall time (what every page shows), in a <time> element. */
export function klTime(iso: string | null | undefined): SafeHtml {
  if (!iso) return html`–`;
  return html`<time datetime="${iso}">${formatKl(new Date(iso))}</time>`;
}

/** The base path of an agency's pages. */
export const agencyBase = (agency: string): string => `/dashboard/a/${encodeURIComponent(agency)}`;

/** A table that scrolls sideways on a phone instead of widening the page; captioned, headers scoped. */
export function table(caption: string, headers: readonly string[], rows: readonly SafeHtml[]): SafeHtml {
  return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0">
    <table>
      <caption>
        ${caption}
      </caption>
      <thead>
        <tr>
          ${headers.map((h) => html`<th scope="col">${h}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${
          rows.length > 0
            ? rows
            : html`<tr>
                <td colspan="${headers.length}">Nothing to show.</td>
              </tr>`
        }
      </tbody>
    </table>
  </div>`;
}

/** A query string of the non-empty values, for links that keep the current filters. */
export function queryOf(values: Readonly<Record<string, string | number | undefined>>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined && value !== '') query.set(key, String(value));
  }
  const text = query.toString();
  return text ? `?${text}` : '';
}

/** Previous and next links, with where the reader is ("rows 101-200 of 345"). */
export function pager(
  path: string,
  filters: Readonly<Record<string, string | undefined>>,
  page: { page: number; size: number; total: number },
): SafeHtml {
  const first = page.total === 0 ? 0 : page.page * page.size + 1;
  const last = Math.min(page.total, (page.page + 1) * page.size);
  const link = (n: number, label: string, rel: string) =>
    html`<a href="${path}${queryOf({ ...filters, page: n === 0 ? undefined : n })}" rel="${rel}"
      >${label}</a
    >`;
  return html`<nav class="pager" aria-label="Pages">
    <p>Rows ${first}–${last} of ${page.total}</p>
    ${page.page > 0 ? link(page.page - 1, 'Previous page', 'prev') : ''}
    ${last < page.total ? link(page.page + 1, 'Next page', 'next') : ''}
  </nav>`;
}

/** A labelled input of a GET filter form. */
export function field(
  label: string,
  name: string,
  value: string | undefined,
  attrs: { type?: string; placeholder?: string } = {},
): SafeHtml {
  return html`<p class="field">
    <label for="f-${name}">${label}</label>
    <input
      id="f-${name}"
      name="${name}"
      type="${attrs.type ?? 'text'}"
      value="${value ?? ''}"
      ${attrs.placeholder ? html`placeholder="${attrs.placeholder}"` : ''}
    />
  </p>`;
}

/** A labelled select of a GET filter form; the empty choice means "any". */
export function select(
  label: string,
  name: string,
  value: string | undefined,
  choices: readonly (readonly [string, string])[],
): SafeHtml {
  return html`<p class="field">
    <label for="f-${name}">${label}</label>
    <select id="f-${name}" name="${name}">
      <option value="">Any</option>
      ${choices.map(([v, text]) => html`<option value="${v}" ${v === value ? html`selected` : ''}>${text}</option>`)}
    </select>
  </p>`;
}

/** A status as a word with a class for its colour (the word is what counts; colour only repeats it). */
export function statusBadge(status: string): SafeHtml {
  return html`<span class="badge badge-${status}">${status}</span>`;
}
