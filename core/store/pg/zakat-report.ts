/**
 * The zakat report's reads on PostgreSQL (the SQLite twin: ../sqlite/zakat-report.ts): a page and its
 * total from one snapshot; every row streamed by keyset, 1,000 at a time (../keyset.ts).
 */
import { statement, type PgDb } from './pool.ts';
import { inSnapshot } from './snapshot-read.ts';
import { seekRows } from '../keyset.ts';
import type { ZakatQuery, ZakatReportRepository, ZakatReportRow } from '../zakat-report.ts';

const COLUMNS = `n.posting_id AS "postingId", n.sink, n.orderno, n.status, n.amount_sen AS "amountSen", n.name,
  n.email, n.data_email AS "dataEmail", n.time_utc AS "timeUtc", n.business_date AS "businessDate",
  n.zakat_name AS "zakatName", n.ic_no AS "icNo", n.phone, n.address, n.postcode, n.city, n.state,
  n.type_raw AS "typeRaw", n.type, n.year, n.zakat_amount_sen AS "zakatAmountSen", n.rate_sen AS "rateSen",
  n.dependants, n.exceptions`;

// $1 sinks, $2 first and $3 last business day: each posting's latest normalised version.
const LATEST = `FROM normalised_postings n
  WHERE n.sink = ANY($1::text[]) AND n.business_date BETWEEN $2 AND $3
    AND n.version = (SELECT max(version) FROM normalised_postings m WHERE m.posting_id = n.posting_id)`;
const COUNT = statement(`SELECT count(*) AS n ${LATEST}`);
const PAGE = statement(`SELECT ${COLUMNS} ${LATEST} ORDER BY n.posting_id LIMIT $4 OFFSET $5`);
// The rows after a posting ($4), in posting order: one chunk of the streamed report.
const SEEK = statement(`SELECT ${COLUMNS} ${LATEST} AND n.posting_id > $4 ORDER BY n.posting_id LIMIT $5`);

/** Rows read per round trip when every row is streamed. */
const CHUNK = 1000;

const values = ({ sink, start, end }: ZakatQuery) => [
  typeof sink === 'string' ? [sink] : [...new Set(sink)],
  start,
  end,
];

/** The zakat report's paged and streamed reads. */
export function pgZakatReport(db: PgDb): ZakatReportRepository {
  return {
    async page(query) {
      return inSnapshot(db, async (tx) => ({
        rows: await tx.rows<ZakatReportRow>(PAGE, [...values(query), query.limit, query.offset]),
        total: (await tx.row<{ n: number }>(COUNT, values(query)))?.n ?? 0,
      }));
    },

    async *rows(query) {
      yield* seekRows<ZakatReportRow>(
        (after, limit) => db.rows(SEEK, [...values(query), after?.postingId ?? 0, limit]),
        CHUNK,
      );
    },
  };
}
