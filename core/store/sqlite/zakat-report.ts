import type { Db } from './db.ts';
import { placePage, type DayCount } from '../day-pages.ts';
import { NO_LATER_IN_LEDGER } from '../ledger-latest.ts';
import { mergedInOrder, seekRows, zakatBefore } from '../keyset.ts';
import type { ZakatQuery, ZakatReportRepository, ZakatReportRow } from '../zakat-report.ts';

/** Rows fetched per query when every row is streamed. */
const CHUNK = 1000;

const COLUMNS = `n.posting_id AS postingId, n.sink, n.orderno, n.status, n.amount_sen AS amountSen, n.name,
  n.email, n.data_email AS dataEmail, n.time_utc AS timeUtc, n.business_date AS businessDate,
  n.zakat_name AS zakatName, n.ic_no AS icNo, n.phone, n.address, n.postcode, n.city, n.state,
  n.type_raw AS typeRaw, n.type, n.year, n.zakat_amount_sen AS zakatAmountSen, n.rate_sen AS rateSen,
  n.dependants, n.exceptions`;

// One agency by equality, several through a JSON array of codes.
const ONE_SINK = 'l.sink = @sink';
const ANY_SINK = 'l.sink IN (SELECT value FROM json_each(@sinks))';

/**
 * Each posting's latest version in the agency's ledger, for business days @start..@end: the rows the
 * nightly workbook and the dashboard show (decision 229). The ledger's day index holds the posting and
 * version, so this walks the days' entries in report order, each checked against the primary key.
 */
const latest = (sinks: string) => `FROM ledger_entries l
  WHERE ${sinks} AND l.business_date BETWEEN @start AND @end AND ${NO_LATER_IN_LEDGER}`;

/** Report order: business day, then posting (then agency, for a posting in two agencies' ledgers). */
const ORDER = 'ORDER BY l.business_date, l.posting_id, l.sink';

/** The page's ledger keys first, then only their normalised versions are read. */
const withRows = (keys: string) => `WITH page AS (${keys})
  SELECT ${COLUMNS} FROM page JOIN normalised_postings n ON n.posting_id = page.posting_id AND n.version = page.version
  ORDER BY page.business_date, page.posting_id, page.sink`;

/**
 * The rows of each day, from the ledger's per-day counts (migration 020, kept by a trigger in each append's
 * transaction): as many rows read as days that have entries, however many entries the range holds.
 */
const daysSql = (sinks: string) => `SELECT l.business_date AS day, sum(l.n) AS n FROM ledger_day_counts l
  WHERE ${sinks} AND l.business_date BETWEEN @start AND @end AND l.n > 0
  GROUP BY l.business_date ORDER BY l.business_date`;
const pageSql = (sinks: string) =>
  withRows(`SELECT l.sink, l.posting_id, l.version, l.business_date
  ${latest(sinks)} ${ORDER} LIMIT @limit OFFSET @offset`);

/** One agency's statements, exported so that a test can check their plans. */
export const ZAKAT_DAY_COUNTS_SQL = daysSql(ONE_SINK);
export const ZAKAT_PAGE_SQL = pageSql(ONE_SINK);
/**
 * One agency's rows after a known (business day, posting): a chunk of the stream. The key alone bounds the
 * range from below (the first chunk starts at the first day), so each chunk starts where the last ended.
 */
export const ZAKAT_SEEK_SQL = withRows(`SELECT l.sink, l.posting_id, l.version, l.business_date
  FROM ledger_entries l
  WHERE l.sink = @sink AND (l.business_date, l.posting_id) > (@afterDay, @afterPosting) AND l.business_date <= @end
    AND ${NO_LATER_IN_LEDGER} ${ORDER} LIMIT @limit`);

type Bound = { sink: string; sinks: string; start: string; end: string };

function statements(db: Db) {
  const reads = (sinks: string) => ({
    days: db.prepare<Bound, DayCount>(daysSql(sinks)),
    page: db.prepare<Bound & { limit: number; offset: number }, ZakatReportRow>(pageSql(sinks)),
  });
  return {
    one: reads(ONE_SINK),
    any: reads(ANY_SINK),
    seek: db.prepare<Bound & { afterDay: string; afterPosting: number; limit: number }, ZakatReportRow>(
      ZAKAT_SEEK_SQL,
    ),
  };
}

/** The zakat report's paged and streamed reads. */
export function sqliteZakatReport(db: Db): ZakatReportRepository {
  const read = statements(db);
  const bind = ({ sink, start, end }: ZakatQuery) => {
    const sinks = typeof sink === 'string' ? [sink] : [...new Set(sink)];
    return { sinks, params: { sink: sinks[0] ?? '', sinks: JSON.stringify(sinks), start, end } };
  };
  /** One agency's rows in report order, by keyset from (start, before any posting). */
  const seekAll = (params: Bound) =>
    seekRows<ZakatReportRow>(
      (after, limit) =>
        read.seek.all({
          ...params,
          afterDay: after?.businessDate ?? params.start,
          afterPosting: after?.postingId ?? -1,
          limit,
        }),
      CHUNK,
    );
  return {
    /**
     * One page and the total, from one read transaction. The total and the page's first day come from the
     * per-day counts, so OFFSET only skips rows of the page's own first day: a deep page costs about what
     * the first does, and no page reads outside the days asked for.
     */
    async page(
      query: ZakatQuery & { limit: number; offset: number },
    ): Promise<{ rows: ZakatReportRow[]; total: number }> {
      const { sinks, params } = bind(query);
      const use = sinks.length === 1 ? read.one : read.any;
      return db.transaction(() => {
        const { total, place } = placePage(use.days.all(params), query.offset, query.limit);
        if (!place) return { rows: [], total };
        // Several agencies' entries of a day are sorted together: the read ends with the last day the page
        // reaches, so the sort never sees the rest of the range.
        const rows = use.page.all({
          ...params,
          start: place.day,
          end: place.lastDay ?? params.end,
          limit: query.limit,
          offset: place.skip,
        });
        return { rows, total };
      })();
    },

    /**
     * Every row, in report order, fetched 1,000 at a time by keyset: memory stays flat and the connection
     * is never held between chunks (better-sqlite3 cannot run other statements mid-iteration). Several
     * agencies are read each through its own index range and merged.
     */
    async *rows(query: ZakatQuery): AsyncGenerator<ZakatReportRow> {
      const { sinks, params } = bind(query);
      yield* mergedInOrder(
        sinks.map((sink) => seekAll({ ...params, sink })),
        zakatBefore,
      );
    },
  };
}
