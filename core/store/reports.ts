import type { Db } from './db.ts';
import type { NormalisedFields } from './pipeline.ts';

/** A bank posting as the zakat report shows it: its latest normalised version (exceptions as JSON text). */
export type ZakatReportRow = Omit<
  NormalisedFields,
  'bankAgency' | 'address' | 'postcode' | 'city' | 'zakatAmountSen' | 'exceptions'
> & { postingId: number; exceptions: string };

/** Rows fetched per query when every row is streamed. */
const CHUNK = 1000;

const COLUMNS = `n.posting_id AS postingId, n.orderno, n.status, n.amount_sen AS amountSen, n.name, n.email,
  n.time_utc AS timeUtc, n.business_date AS businessDate, n.zakat_name AS zakatName, n.ic_no AS icNo,
  n.phone, n.state, n.type_raw AS typeRaw, n.type, n.year, n.rate_sen AS rateSen, n.dependants, n.exceptions`;

const LATEST = `FROM normalised_postings n
  WHERE n.sink = @sink AND n.business_date BETWEEN @start AND @end
    AND n.version = (SELECT max(version) FROM normalised_postings m WHERE m.posting_id = n.posting_id)`;

/** The read side of reports: coarse, paged queries, one per report. */
export function reportsRepository(db: Db) {
  const count = db.prepare<{ sink: string; start: string; end: string }, { n: number }>(
    `SELECT count(*) AS n ${LATEST}`,
  );
  const page = db.prepare<
    { sink: string; start: string; end: string; limit: number; offset: number },
    ZakatReportRow
  >(`SELECT ${COLUMNS} ${LATEST} ORDER BY n.posting_id LIMIT @limit OFFSET @offset`);
  const seek = db.prepare<
    { sink: string; start: string; end: string; after: number; limit: number },
    ZakatReportRow
  >(`SELECT ${COLUMNS} ${LATEST} AND n.posting_id > @after ORDER BY n.posting_id LIMIT @limit`);
  return {
    /** One page of an agency's postings for business days start..end; limit -1 means every row. */
    async zakatPage(query: {
      sink: string;
      start: string;
      end: string;
      limit: number;
      offset: number;
    }): Promise<{ rows: ZakatReportRow[]; total: number }> {
      const total = count.get(query)?.n ?? 0;
      return { rows: page.all(query), total };
    },

    /**
     * Every row of the zakat report, in report order, fetched 1,000 at a time by keyset: memory stays flat
     * and the connection is never held between chunks (better-sqlite3 cannot run other statements
     * mid-iteration).
     */
    async *zakatRows(query: { sink: string; start: string; end: string }): AsyncGenerator<ZakatReportRow> {
      let after = 0;
      for (;;) {
        const rows = seek.all({ ...query, after, limit: CHUNK });
        for (const row of rows) yield row;
        const last = rows.at(-1);
        if (!last || rows.length < CHUNK) return;
        after = last.postingId;
      }
    },
  };
}
