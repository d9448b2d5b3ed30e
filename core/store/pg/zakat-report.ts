/**
 * The zakat report's reads on PostgreSQL (the SQLite twin: ../sqlite/zakat-report.ts): each agency's ledger
 * by business day in posting order (decision 229); a page and its total from one snapshot, placed by the
 * ledger's day counts (decision 248); every row streamed by keyset, 1,000 at a time (../keyset.ts).
 */
import { LATEST_IN_LEDGER, NO_LATER_IN_LEDGER } from '../ledger-latest.ts';
import { statement, type PgDb } from './pool.ts';
import { inSnapshot } from './snapshot-read.ts';
import { mergedInOrder, seekRows, zakatBefore } from '../keyset.ts';
import { placePage, type DayCount } from '../day-pages.ts';
import type { ZakatQuery, ZakatReportRepository, ZakatReportRow } from '../zakat-report.ts';

const COLUMNS = `n.posting_id AS "postingId", n.sink, n.orderno, n.status, n.amount_sen AS "amountSen", n.name,
  n.email, n.data_email AS "dataEmail", n.time_utc AS "timeUtc", n.business_date AS "businessDate",
  n.zakat_name AS "zakatName", n.ic_no AS "icNo", n.phone, n.address, n.postcode, n.city, n.state,
  n.type_raw AS "typeRaw", n.type, n.year, n.zakat_amount_sen AS "zakatAmountSen", n.rate_sen AS "rateSen",
  n.dependants, n.exceptions`;

// $1 sinks, $2 first and $3 last business day: each posting's latest version in each agency's ledger.
const LATEST = `FROM ledger_entries l
  WHERE l.sink = ANY($1::text[]) AND l.business_date BETWEEN $2 AND $3 AND ${LATEST_IN_LEDGER}`;
/** Report order: business day, then posting (then agency, for a posting in two agencies' ledgers). */
const ORDER = 'ORDER BY l.business_date, l.posting_id, l.sink';

/** The page's ledger keys first, then only their normalised versions are read. */
const withRows = (keys: string) => `WITH page AS (${keys})
  SELECT ${COLUMNS} FROM page JOIN normalised_postings n ON n.posting_id = page.posting_id AND n.version = page.version
  ORDER BY page.business_date, page.posting_id, page.sink`;
const KEYS = 'SELECT l.sink, l.posting_id, l.version, l.business_date';

/**
 * The postings of each day of the range ($1 sinks, $2 first and $3 last business day), at their latest
 * version (decision 248): the entries as counted (folded, and appended since), less the later versions the
 * upkeep has not yet paired with an older version of their posting but that now have one. As many rows
 * read as days with entries, plus the few versions appended since the upkeep last looked.
 */
const DAYS = statement(
  `SELECT day, sum(n) AS n FROM (
     SELECT business_date AS day, n FROM ledger_entry_day_counts
     WHERE sink = ANY($1::text[]) AND business_date BETWEEN $2 AND $3
     UNION ALL
     SELECT business_date, n FROM ledger_entry_day_count_deltas
     WHERE sink = ANY($1::text[]) AND business_date BETWEEN $2 AND $3
     UNION ALL
     SELECT u.business_date, -1 FROM ledger_unpaired_versions u
     WHERE u.sink = ANY($1::text[]) AND u.business_date BETWEEN $2 AND $3
       AND EXISTS (SELECT 1 FROM ledger_entries o
                   WHERE o.sink = u.sink AND o.posting_id = u.posting_id AND o.version < u.version)
   ) counted GROUP BY day HAVING sum(n) <> 0 ORDER BY day`,
);
const PAGE = statement(withRows(`${KEYS} ${LATEST} ${ORDER} LIMIT $4 OFFSET $5`));
// One agency ($1) after a (business day $2, posting $3) up to the last day $4, in report order: one chunk of
// the stream. The key alone bounds the index range from below, so each chunk starts where the last ended.
const SEEK = statement(
  withRows(`${KEYS} FROM ledger_entries l
    WHERE l.sink = $1 AND (l.business_date, l.posting_id) > ($2::text, $3::bigint) AND l.business_date <= $4
      AND ${NO_LATER_IN_LEDGER} ${ORDER} LIMIT $5`),
);

/** Rows read per round trip when every row is streamed. */
const CHUNK = 1000;

const sinksOf = (sink: ZakatQuery['sink']) => (typeof sink === 'string' ? [sink] : [...new Set(sink)]);

/** The zakat report's paged and streamed reads. */
export function pgZakatReport(db: PgDb): ZakatReportRepository {
  return {
    /**
     * One page and the total, from one snapshot. The total and the page's first day come from the day
     * counts, so OFFSET only skips rows of the page's own first day, and no page reads outside the days it
     * covers: a deep page over years costs about what the first one does.
     */
    async page({ sink, start, end, limit, offset }) {
      const sinks = sinksOf(sink);
      return inSnapshot(db, async (tx) => {
        const { total, place } = placePage(await tx.rows<DayCount>(DAYS, [sinks, start, end]), offset, limit);
        if (!place) return { rows: [], total };
        const rows = await tx.rows<ZakatReportRow>(PAGE, [
          sinks,
          place.day,
          place.lastDay ?? end,
          limit,
          place.skip,
        ]);
        return { rows, total };
      });
    },

    /** Each agency read through its own index range, merged: one query over all would sort each chunk. */
    async *rows({ sink, start, end }) {
      yield* mergedInOrder(
        sinksOf(sink).map((one) =>
          seekRows<ZakatReportRow>(
            (after, limit) =>
              db.rows(SEEK, [one, after?.businessDate ?? start, after?.postingId ?? -1, end, limit]),
            CHUNK,
          ),
        ),
        zakatBefore,
      );
    },
  };
}
