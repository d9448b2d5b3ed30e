/** Ledger entries written straight into a store, each with the normalised version it points at. */
import type { EngineStore } from './engines.ts';

/** One entry: its agency (sink), posting, version, business day, status, amount and exception codes. */
export interface LedgerRow {
  sink: string;
  postingId: number;
  version: number;
  day: string;
  /** The bank's status; 'success' unless given. */
  status?: 'success' | 'pending' | 'failed';
  amountSen: number;
  /** The codes as the ledger keeps them (a JSON array); none unless given. */
  exceptions?: string;
}

/**
 * The SQL that inserts `rows` as the pipeline leaves them: a normalised version and its ledger entry each.
 * The pipeline's rows refer to stored postings and batches, which the tests using this need not make (SQLite
 * enforces the keys, so they are off for the statement; PostgreSQL has none on these rows).
 */
export function ledgerRowsSql(engine: string, rows: readonly LedgerRow[]): string {
  const normalised = rows.map(
    (
      e,
    ) => `(${e.postingId}, ${e.version}, 'b', '${e.sink}', 'Z${e.postingId}', 'BANK', '${e.status ?? 'success'}', ${e.amountSen},
      'Nur', 'n@example.my', '2026-11-20T01:00:00.000Z', '${e.day}', '${e.day}', '${e.exceptions ?? '[]'}',
      '2026-11-20T01:00:00.000Z')`,
  );
  const ledger = rows.map(
    (
      e,
    ) => `('${e.sink}', ${e.postingId}, ${e.version}, '${e.day}', '${e.day}', 0, '${e.status ?? 'success'}', ${e.amountSen},
      '${e.exceptions ?? '[]'}', '2026-11-20T01:00:00.000Z', '2026-11-20T01:00:00.000Z')`,
  );
  return `${engine === 'sqlite' ? 'PRAGMA foreign_keys = OFF;' : ''}
    INSERT INTO normalised_postings (posting_id, version, batch_id, sink, orderno, bank_agency, status, amount_sen,
      name, email, time_utc, business_date, received_date, exceptions, normalised_at) VALUES ${normalised.join(',')};
    INSERT INTO ledger_entries (sink, posting_id, version, business_date, received_date, is_adjustment, status,
      amount_sen, exceptions, created_at, received_at) VALUES ${ledger.join(',')};`;
}

/**
 * `rows` appended in two statements: the second brings the first versions of the postings in seven (not in
 * five) whose second version the first already had, as a batch's ledger job run after a later one's would.
 */
export async function appendFirstVersionsLate(store: EngineStore, rows: readonly LedgerRow[]): Promise<void> {
  const late = (r: LedgerRow) => r.postingId % 7 === 0 && r.postingId % 5 !== 0 && r.version === 1;
  await store.write(
    ledgerRowsSql(
      store.engine,
      rows.filter((r) => !late(r)),
    ),
  );
  await store.write(ledgerRowsSql(store.engine, rows.filter(late)));
}
