import { businessDate } from '../time.ts';
import type { Job, OutboxCompletion } from './outbox.ts';

/** A bank record in canonical form, with its exception codes (what pipeline/normalise produces). */
export interface NormalisedFields {
  orderno: string;
  bankAgency: string;
  status: 'success' | 'pending' | 'failed';
  amountSen: number;
  name: string;
  email: string;
  /** The bank's data.email (spec 2.5), which may differ from the transaction e-mail; null when absent. */
  dataEmail: string | null;
  timeUtc: string;
  businessDate: string;
  zakatName: string | null;
  icNo: string | null;
  phone: string | null;
  state: string | null;
  typeRaw: string | null;
  type: string | null;
  year: string | null;
  address: string | null;
  postcode: string | null;
  city: string | null;
  zakatAmountSen: number | null;
  rateSen: number | null;
  dependants: number | null;
  exceptions: string[];
}

/** One version of a posting that a batch brought in (accepted or updated). */
export interface BatchVersion {
  postingId: number;
  version: number;
  /** The record as received, canonical JSON. */
  record: string;
  /** The posting's business day (of its first version). */
  businessDate: string;
  /** The Kuala Lumpur day this version was received. */
  receivedDate: string;
  /** Where its ledger entry goes: an agency code, or TEST_SINK. */
  sink: string;
}

/** A normalised version to store: its fields, which version of which posting, from which batch, for which sink. */
export type NormalisedVersion = NormalisedFields &
  Omit<BatchVersion, 'record' | 'businessDate'> & { batchId: string };

/** The sink of the bank's live-test entries; `#` cannot start an agency code, so it never collides. */
export const TEST_SINK = '#test';

export interface LedgerEntry {
  sink: string;
  postingId: number;
  version: number;
  businessDate: string;
  receivedDate: string;
  isAdjustment: boolean;
  status: string;
  amountSen: number;
  exceptions: string[];
}

/** The pipeline's books: the normalised versions of bank postings, and each sink's (agency's) ledger. */
export interface LedgerRepository {
  /** The posting versions a webhook batch brought in, whether or not they were updated since. */
  batchVersions(batchId: string): Promise<BatchVersion[]>;

  /**
   * Stores normalised versions and the jobs they cause, in one transaction, and completes the normalise
   * job's own outbox row (`completes`) in it too. Re-running changes nothing. Writes of the same turn
   * (other jobs' saves and appends) may share its commit; it settles after that commit.
   */
  saveNormalised(
    rows: readonly NormalisedVersion[],
    jobs: readonly Job[],
    now: Date,
    completes?: OutboxCompletion,
  ): Promise<void>;

  /**
   * Appends a batch's normalised versions for one sink to that sink's ledger, and completes the ledger
   * job's outbox row (`completes`) in the same transaction; an entry already there is left as it is (the
   * job may run twice). Appends of the same turn (the other sinks') share one commit.
   */
  appendFromBatch(batchId: string, sink: string, now: Date, completes?: OutboxCompletion): Promise<void>;

  /** A sink's ledger entries of a business day (or all), oldest first: for the workbook and tests. */
  entries(sink: string, day?: string): Promise<LedgerEntry[]>;

  /**
   * Adds the ledger's appended day-count rows into its day counts (PostgreSQL, decision 248); returns how
   * many rows it folded. Run now and again by the pipeline's upkeep; the counts are the same before and
   * after. SQLite keeps its day counts in place: nothing to fold.
   */
  foldDayCounts(): Promise<number>;
}

/** A version of a batch as both engines read it: the posting's route and agency, the instant received. */
export type StoredBatchVersion = Omit<BatchVersion, 'sink' | 'receivedDate'> & {
  receivedAt: string;
  route: string;
  agencyCode: string | null;
};

/**
 * The versions a normalise job is given: each with its sink and the Kuala Lumpur day it was received. That
 * day is remembered per instant for the call: a batch's versions were mostly received at one instant, and
 * converting it once per row was a twentieth of the normalise job. Fields are named one by one: rest and
 * spread per row cost more than the rest of this mapping.
 */
export function batchVersionsOf(rows: readonly StoredBatchVersion[]): BatchVersion[] {
  const days = new Map<string, string>();
  const receivedDate = (receivedAt: string) => {
    let day = days.get(receivedAt);
    if (day === undefined) {
      day = businessDate(new Date(receivedAt));
      days.set(receivedAt, day);
    }
    return day;
  };
  return rows.map((r) => ({
    postingId: r.postingId,
    version: r.version,
    record: r.record,
    businessDate: r.businessDate,
    receivedDate: receivedDate(r.receivedAt),
    sink: r.route === 'test' || r.agencyCode === null ? TEST_SINK : r.agencyCode,
  }));
}
