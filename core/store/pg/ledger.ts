/**
 * Normalised versions and the per-agency ledger on PostgreSQL (the SQLite twin: ../sqlite/ledger.ts). A batch's
 * normalised rows go in with one COPY the first time (decision 221), with one INSERT of a JSON array
 * expanded by json_to_recordset when the batch was saved before (ON CONFLICT, which COPY cannot do); never
 * one round trip per row. Its ledger entries likewise go in without ON CONFLICT the first time (222).
 */
import {
  batchVersionsOf,
  type StoredBatchVersion,
  type LedgerEntry,
  type NormalisedVersion,
  type LedgerRepository,
} from '../ledger.ts';
import { pgGroupCommitter } from './group-commit.ts';
import { LEDGER_LINGER } from '../linger.ts';
import { completeOutbox, writeOutbox } from './outbox.ts';
import { isUniqueViolation, statement, type PgDb, type Queryable } from './pool.ts';
import { jsonParam } from './text.ts';

const BATCH_VERSIONS = statement(
  // Version 1 lives in the posting row until the posting first changes, then in the history.
  `SELECT v.posting_id AS "postingId", v.version, v.record, v.received_at AS "receivedAt",
     p.business_date AS "businessDate", p.route, p.agency_code AS "agencyCode"
   FROM bank_posting_versions v JOIN bank_postings p ON p.id = v.posting_id
   WHERE v.batch_id = $1
   UNION ALL
   SELECT id, 1, record, created_at, business_date, route, agency_code
   FROM bank_postings WHERE first_batch_id = $1 AND version = 1
   ORDER BY 1, 2`,
);

// A version comes from one batch, and a batch's versions are saved all at once or not at all: whether its
// first version is stored says whether the batch was saved. Asked by primary key, so the plan is always an
// index lookup (`batch_id = ANY($1)` got a generic plan that scanned the table for a batch not there).
const ANY_SAVED = statement(
  `SELECT EXISTS (SELECT 1 FROM unnest($1::bigint[], $2::integer[]) AS k(posting_id, version)
     JOIN normalised_postings n USING (posting_id, version)) AS "saved"`,
);

const NORMALISED_COLUMNS = (
  'posting_id version batch_id sink orderno bank_agency status amount_sen name email time_utc business_date ' +
  'received_date zakat_name ic_no phone state type_raw type year address postcode city zakat_amount_sen ' +
  'rate_sen dependants exceptions normalised_at data_email'
).split(' ');

/** A normalised version as the values of NORMALISED_COLUMNS, in their order. */
function normalisedValues(r: NormalisedVersion, at: string): unknown[] {
  // prettier-ignore
  return [
    r.postingId, r.version, r.batchId, r.sink, r.orderno, r.bankAgency, r.status, r.amountSen, r.name,
    r.email, r.timeUtc, r.businessDate, r.receivedDate, r.zakatName, r.icNo, r.phone, r.state, r.typeRaw,
    r.type, r.year, r.address, r.postcode, r.city, r.zakatAmountSen, r.rateSen, r.dependants,
    JSON.stringify(r.exceptions), at, r.dataEmail,
  ];
}

/**
 * Stores a save's normalised versions. COPY costs the server a third of the JSON insert (parsing the JSON
 * was most of that), but cannot skip a row already there: it runs only when none of the batches was saved
 * before. A save run twice at once can still meet the other's rows: its copy then fails on the key, and
 * the caller runs it again, which now finds them and inserts with ON CONFLICT.
 */
async function insertNormalised(
  tx: Queryable,
  rows: readonly NormalisedVersion[],
  at: string,
): Promise<void> {
  const firsts = new Map<string, NormalisedVersion>();
  for (const row of rows) if (!firsts.has(row.batchId)) firsts.set(row.batchId, row);
  const keys = [...firsts.values()];
  const { saved } = (await tx.row<{ saved: boolean }>(ANY_SAVED, [
    keys.map((r) => r.postingId),
    keys.map((r) => r.version),
  ]))!;
  if (!saved) {
    await tx.copyRows(
      'normalised_postings',
      NORMALISED_COLUMNS,
      rows.map((r) => normalisedValues(r, at)),
    );
    return;
  }
  const json = jsonParam(rows.map((row) => ({ ...row, exceptions: JSON.stringify(row.exceptions) })));
  await tx.run(INSERT_NORMALISED, [json, at]);
}

const INSERT_NORMALISED = statement(
  `INSERT INTO normalised_postings (posting_id, version, batch_id, sink, orderno, bank_agency, status, amount_sen,
     name, email, time_utc, business_date, received_date, zakat_name, ic_no, phone, state, type_raw, type, year,
     address, postcode, city, zakat_amount_sen, rate_sen, dependants, exceptions, normalised_at, data_email)
   SELECT "postingId", version, "batchId", sink, orderno, "bankAgency", status, "amountSen", name, email,
     "timeUtc", "businessDate", "receivedDate", "zakatName", "icNo", phone, state, "typeRaw", type, year,
     address, postcode, city, "zakatAmountSen", "rateSen", dependants, exceptions, $2, "dataEmail"
   FROM json_to_recordset($1::json) AS r ("postingId" bigint, version integer, "batchId" text, sink text,
     orderno text, "bankAgency" text, status text, "amountSen" bigint, name text, email text,
     "timeUtc" timestamptz, "businessDate" text, "receivedDate" text, "zakatName" text, "icNo" text,
     phone text, state text, "typeRaw" text, type text, year text, address text, postcode text, city text,
     "zakatAmountSen" bigint, "rateSen" bigint, dependants integer, exceptions text, "dataEmail" text)
   ON CONFLICT (posting_id, version) DO NOTHING`,
);

// A version received on a later day than its posting's business day is an adjustment of that day. The first
// append goes without ON CONFLICT (decision 222): its check of each row against the key before inserting was
// a quarter of the append's cost, and only a job run again (its worker died, or Redis handed it back) ever
// meets its own entries. That one fails on the key and is run again with ON CONFLICT.
const APPEND_SELECT = `INSERT INTO ledger_entries (sink, posting_id, version, business_date, received_date,
     is_adjustment, status, amount_sen, exceptions, created_at, received_at)
   SELECT sink, posting_id, version, n.business_date, received_date,
     (received_date > n.business_date)::integer, status, amount_sen, exceptions, $3, b.received_at
   FROM normalised_postings n JOIN webhook_batches b ON b.id = n.batch_id
   WHERE n.batch_id = $1 AND sink = $2`;
const APPEND_FROM_BATCH = statement(APPEND_SELECT);
const APPEND_FROM_BATCH_AGAIN = statement(
  `${APPEND_SELECT} ON CONFLICT (sink, posting_id, version) DO NOTHING`,
);

const LEDGER = statement(
  `SELECT sink, posting_id AS "postingId", version, business_date AS "businessDate",
     received_date AS "receivedDate", is_adjustment AS "isAdjustment", status, amount_sen AS "amountSen",
     exceptions
   FROM ledger_entries WHERE sink = $1 AND ($2::text IS NULL OR business_date = $2)
   ORDER BY posting_id, version`,
);

// The ledger's day counts kept up (decision 248), by one process at a time (the lock; the others skip).
// First the later versions noted by appends that now have an older version of their posting in the same
// ledger: each gives its day -1, and its note goes. Then the appended rows are added into
// ledger_entry_day_counts, as the payments' are (orders.ts): only the rows this statement sees are deleted.
const FOLD_LOCK_TAKEN = statement('SELECT pg_try_advisory_xact_lock($1) AS mine');
const PAIR_VERSIONS = statement(
  `WITH paired AS (
     DELETE FROM ledger_unpaired_versions u
     WHERE EXISTS (SELECT 1 FROM ledger_entries o
                   WHERE o.sink = u.sink AND o.posting_id = u.posting_id AND o.version < u.version)
     RETURNING sink, business_date
   )
   INSERT INTO ledger_entry_day_count_deltas (sink, business_date, n)
   SELECT sink, business_date, -count(*) FROM paired GROUP BY 1, 2`,
);
const FOLD_DAY_COUNTS = statement(
  `WITH gone AS (
     DELETE FROM ledger_entry_day_count_deltas RETURNING sink, business_date, n
   ), folded AS (
     INSERT INTO ledger_entry_day_counts (sink, business_date, n)
     SELECT sink, business_date, sum(n) FROM gone GROUP BY 1, 2 HAVING sum(n) <> 0
     ON CONFLICT (sink, business_date) DO UPDATE SET n = ledger_entry_day_counts.n + excluded.n
   )
   SELECT count(*)::int AS n FROM gone`,
);
/** pg_try_advisory_xact_lock key of the fold ('amld'). */
const FOLD_LOCK = 0x616d6c64;

/** The ledger repository (what the pipeline reads and writes) over a PostgreSQL pool. */
export function pgLedger(db: PgDb): LedgerRepository {
  // The pipeline's writes of one turn (the sinks' appends of a batch, the next batch's save) share a commit.
  const inGroup = pgGroupCommitter(db);
  return {
    async batchVersions(batchId) {
      const rows = await db.rows<StoredBatchVersion>(BATCH_VERSIONS, [batchId]);
      return batchVersionsOf(rows);
    },

    async saveNormalised(rows, jobs, now, completes) {
      const at = now.toISOString();
      const save = async (tx: Queryable) => {
        if (rows.length > 0) await insertNormalised(tx, rows, at);
        for (const job of jobs) await writeOutbox(tx, job.queue, job.jobId, job.payload, at);
        if (completes) await completeOutbox(tx, completes, at);
      };
      try {
        await inGroup(save);
      } catch (err) {
        // The copy met the rows of the same save committed meanwhile (decision 221): once more, inserting.
        if (!isUniqueViolation(err)) throw err;
        await inGroup(save);
      }
    },

    async appendFromBatch(batchId, sink, now, completes) {
      const at = now.toISOString();
      const append = (again: boolean) => async (tx: Queryable) => {
        await tx.run(again ? APPEND_FROM_BATCH_AGAIN : APPEND_FROM_BATCH, [batchId, sink, at]);
        if (completes) await completeOutbox(tx, completes, at);
      };
      try {
        await inGroup(append(false), LEDGER_LINGER);
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        await inGroup(append(true), LEDGER_LINGER);
      }
    },

    async entries(sink, day) {
      const rows = await db.rows<
        Omit<LedgerEntry, 'isAdjustment' | 'exceptions'> & { isAdjustment: number; exceptions: string }
      >(LEDGER, [sink, day ?? null]);
      return rows.map((row) => ({
        ...row,
        isAdjustment: row.isAdjustment === 1,
        exceptions: JSON.parse(row.exceptions) as string[],
      }));
    },

    async foldDayCounts() {
      return db.transaction(async (tx) => {
        if (!(await tx.row<{ mine: boolean }>(FOLD_LOCK_TAKEN, [FOLD_LOCK]))?.mine) return 0;
        await tx.run(PAIR_VERSIONS);
        return (await tx.row<{ n: number }>(FOLD_DAY_COUNTS))?.n ?? 0;
      });
    },
  };
}
