/** Records that contradicted what was stored, on PostgreSQL (the SQLite twin: ../anomalies.ts). */
import type { AnomaliesRepository, AnomalyRow } from '../anomalies.ts';
import { statement, type PgDb } from './pool.ts';

const LIST = statement(
  `SELECT id, kind, orderno, reason, stored_version AS "storedVersion", stored_record AS "storedRecord",
     incoming_record AS "incomingRecord", first_batch_id AS "firstBatchId", first_seen_at AS "firstSeenAt",
     last_seen_at AS "lastSeenAt", seen_count AS "seenCount", business_date AS "businessDate", status,
     resolved_at AS "resolvedAt", resolution_note AS "resolutionNote"
   FROM anomalies
   WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR business_date = $2)
   ORDER BY first_seen_at, id`,
);

/** The anomalies repository over a PostgreSQL pool. */
export function pgAnomalies(db: PgDb): AnomaliesRepository {
  return {
    async list(filter = {}) {
      return db.rows<AnomalyRow>(LIST, [filter.status ?? null, filter.businessDate ?? null]);
    },

    async resolve(id, note, now) {
      const changed = await db.run(
        `UPDATE anomalies SET status = 'resolved', resolved_at = $1, resolution_note = $2
         WHERE id = $3 AND status = 'open'`,
        [now.toISOString(), note, id],
      );
      return changed === 1;
    },
  };
}
