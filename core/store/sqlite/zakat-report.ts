import type { Db } from './db.ts';
import { seekRows } from '../keyset.ts';
import type { ZakatQuery, ZakatReportRepository, ZakatReportRow } from '../zakat-report.ts';

/** Rows fetched per query when every row is streamed. */
const CHUNK = 1000;

const COLUMNS = `n.posting_id AS postingId, n.sink, n.orderno, n.status, n.amount_sen AS amountSen, n.name,
  n.email, n.data_email AS dataEmail, n.time_utc AS timeUtc, n.business_date AS businessDate,
  n.zakat_name AS zakatName, n.ic_no AS icNo, n.phone, n.address, n.postcode, n.city, n.state,
  n.type_raw AS typeRaw, n.type, n.year, n.zakat_amount_sen AS zakatAmountSen, n.rate_sen AS rateSen,
  n.dependants, n.exceptions`;

// One agency by equality (as before combined reports), several through a JSON array of codes.
const ONE_SINK = 'n.sink = @sink';
const ANY_SINK = 'n.sink IN (SELECT value FROM json_each(@sinks))';

const latest = (sinks: string) => `FROM normalised_postings n
  WHERE ${sinks} AND n.business_date BETWEEN @start AND @end
    AND n.version = (SELECT max(version) FROM normalised_postings m WHERE m.posting_id = n.posting_id)`;

type Bound = { sink: string; sinks: string; start: string; end: string };

function statements(db: Db, sinks: string) {
  return {
    count: db.prepare<Bound, { n: number }>(`SELECT count(*) AS n ${latest(sinks)}`),
    page: db.prepare<Bound & { limit: number; offset: number }, ZakatReportRow>(
      `SELECT ${COLUMNS} ${latest(sinks)} ORDER BY n.posting_id LIMIT @limit OFFSET @offset`,
    ),
    seek: db.prepare<Bound & { after: number; limit: number }, ZakatReportRow>(
      `SELECT ${COLUMNS} ${latest(sinks)} AND n.posting_id > @after ORDER BY n.posting_id LIMIT @limit`,
    ),
  };
}

/** The zakat report's paged and streamed reads. */
export function sqliteZakatReport(db: Db): ZakatReportRepository {
  const one = statements(db, ONE_SINK);
  const any = statements(db, ANY_SINK);
  // Rows of several agencies come in one order (posting ids are global), so paging stays one query.
  const bind = ({ sink, start, end }: ZakatQuery) => {
    const sinks = typeof sink === 'string' ? [sink] : [...new Set(sink)];
    return {
      use: sinks.length === 1 ? one : any,
      params: { sink: sinks[0] ?? '', sinks: JSON.stringify(sinks), start, end },
    };
  };
  return {
    /** One page of the agencies' postings for business days start..end, in posting order. */
    async page(
      query: ZakatQuery & { limit: number; offset: number },
    ): Promise<{ rows: ZakatReportRow[]; total: number }> {
      const { use, params } = bind(query);
      return db.transaction(() => ({
        rows: use.page.all({ ...params, limit: query.limit, offset: query.offset }),
        total: use.count.get(params)?.n ?? 0,
      }))();
    },

    /**
     * Every row of the zakat report, in report order, fetched 1,000 at a time by keyset: memory stays flat
     * and the connection is never held between chunks (better-sqlite3 cannot run other statements
     * mid-iteration).
     */
    async *rows(query: ZakatQuery): AsyncGenerator<ZakatReportRow> {
      const { use, params } = bind(query);
      yield* seekRows<ZakatReportRow>(
        (after, limit) => use.seek.all({ ...params, after: after?.postingId ?? 0, limit }),
        CHUNK,
      );
    },
  };
}
