/** The bank postings page: the zakat report with its exception codes, filtered by code, state and type. */
import { html, type SafeHtml } from '../../../core/html.ts';
import type { ZakatReportRow } from '../../../core/store/index.ts';
import { stateName, typeName } from '../../reconciliation/names.ts';
import { agencyBase, field, klTime, pager, rm, select, statusBadge, table } from './format.ts';

export interface PostingQuery {
  start: string;
  end: string;
  code?: string;
  state?: string;
  type?: string;
}

/** The filter form (its choices are the codes, states and types of those days) and one page. */
export function postingsBody(
  agency: string,
  query: PostingQuery,
  choices: { codes: string[]; states: string[]; types: string[] },
  page: { rows: ZakatReportRow[]; total: number; page: number; size: number },
): SafeHtml {
  const base = `${agencyBase(agency)}/postings`;
  const values = { ...query };
  return html`<form method="get" action="${base}" class="filters" aria-label="Filter bank postings">
      ${field('From (UTC+8)', 'start', query.start, { type: 'date' })}
      ${field('To (UTC+8)', 'end', query.end, { type: 'date' })}
      ${select('Exception code', 'code', query.code, [
        ['any', 'Any exception'],
        ...choices.codes.map((c) => [c, c] as const),
      ])}
      ${select(
        'State',
        'state',
        query.state,
        choices.states.map((s) => [s, stateName(s)] as const),
      )}
      ${select(
        'Zakat type',
        'type',
        query.type,
        choices.types.map((t) => [t, typeName(t)] as const),
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
