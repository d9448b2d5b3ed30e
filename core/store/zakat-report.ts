import type { NormalisedFields } from './ledger.ts';

/**
 * A bank posting as the zakat report shows it: its latest normalised version (exceptions as JSON text), with
 * the agency whose ledger it is in (`sink`).
 */
export type ZakatReportRow = Omit<NormalisedFields, 'bankAgency' | 'exceptions'> & {
  postingId: number;
  sink: string;
  exceptions: string;
};

/** What a zakat report covers: one agency, or several (a token's combined report), and business days. */
export interface ZakatQuery {
  sink: string | readonly string[];
  start: string;
  end: string;
}

/** The zakat report's reads, in posting order. */
export interface ZakatReportRepository {
  /** One page of the agencies' postings for business days start..end, and the total, from one snapshot. */
  page(
    query: ZakatQuery & { limit: number; offset: number },
  ): Promise<{ rows: ZakatReportRow[]; total: number }>;

  /** Every row of the zakat report, in report order, streamed in chunks (memory stays flat). */
  rows(query: ZakatQuery): AsyncGenerator<ZakatReportRow>;
}
