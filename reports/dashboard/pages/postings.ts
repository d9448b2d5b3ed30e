/** The bank postings page: the zakat report with its exception codes, filtered by code, state and type. */
import { html, type SafeHtml } from '../../../core/html.ts';
import type { ZakatReportRow } from '../../../core/store/index.ts';
import { STATE_CODES, stateName, TYPE_CODES, typeName } from '../../reconciliation/names.ts';
import { agencyBase, field, klTime, pager, rm, select, statusBadge, table } from './format.ts';

export interface PostingQuery {
  start: string;
  end: string;
  code?: string;
  state?: string;
  type?: string;
}

/** The choices of a filter, with the value asked for kept even when it is not one of them. */
const withAsked = (codes: readonly string[], asked: string | undefined) =>
  asked === undefined || codes.includes(asked) ? codes : [...codes, asked];

/** The filter form (codes those days carry; the spec's states and types) and one page. */
export function postingsBody(
  agency: string,
  query: PostingQuery,
  codes: readonly string[],
  page: { rows: ZakatReportRow[]; total: number; page: number; size: number },
): SafeHtml {
  const base = `${agencyBase(agency)}/postings`;
  const values = { ...query };
  return html`<form method="get" action="${base}" class="filters" aria-label="Filter bank postings">
      ${field('From (UTC+8)', 'start', query.start, { type: 'date' })}
      ${field('To (UTC+8)', 'end', query.end, { type: 'date' })}
      ${select('Exception code', 'code', query.code, [
        ['any', 'Any exception'],
        ...withAsked(codes, query.code === 'any' ? undefined : query.code).map((c) => [c, c] as const),
      ])}
      ${select(
        'State',
        'state',
        query.state,
        withAsked(STATE_CODES, query.state).map((s) => [s, stateName(s)] as const),
      )}
      ${select(
        'Zakat type',
        'type',
        query.type,
        withAsked(TYPE_CODES, query.type).map((t) => [t, typeName(t)] as const),
      )}
      <p><button type="submit">Filter</button></p>
    </form>
    ${table(
      `Bank postings from ${query.start} to ${query.end}`,
      ['Order', 'Time (UTC+8)', 'Business day', 'Status', 'Amount', 'Payer', 'Type', 'State', 'Exceptions'],
      page.rows.map((r) => {
        const codes = JSON.parse(r.exceptions) as string[];
        return html`<tr>
          <th scope="row">${r.orderno}</th>
          <td>${klTime(r.timeUtc)}</td>
          <td>${r.businessDate}</td>
          <td>${statusBadge(r.status)}</td>
          <td class="num">${rm(r.amountSen)}</td>
          <td>${r.zakatName ?? r.name}</td>
          <td>${r.type ? typeName(r.type) : (r.typeRaw ?? '–')}</td>
          <td>${stateName(r.state)}</td>
          <td>
            ${codes.length > 0 ? codes.map((c, i) => html`${i > 0 ? ', ' : ''}<code>${c}</code>`) : '–'}
          </td>
        </tr>`;
      }),
    )}
    ${pager(base, values, page)}`;
}
