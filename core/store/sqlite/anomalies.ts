import type { Db } from './db.ts';
import { groupCommitter } from './group-commit.ts';
import type { AnomaliesRepository, AnomalyRow } from '../anomalies.ts';

/** Records that contradicted what was stored, for ops to look at and resolve. */
export function sqliteAnomalies(db: Db): AnomaliesRepository {
  // Writes through the connection's group commit: another process's write lock is waited for off this thread.
  const write = groupCommitter(db);
  return {
    async list(filter: { status?: 'open' | 'resolved'; businessDate?: string } = {}): Promise<AnomalyRow[]> {
      return db
        .prepare<Record<string, string | null>, AnomalyRow>(
          `SELECT id, kind, orderno, reason, stored_version AS storedVersion, stored_record AS storedRecord,
             incoming_record AS incomingRecord, first_batch_id AS firstBatchId, first_seen_at AS firstSeenAt,
             last_seen_at AS lastSeenAt, seen_count AS seenCount, business_date AS businessDate, status,
             resolved_at AS resolvedAt, resolution_note AS resolutionNote
           FROM anomalies
           WHERE (@status IS NULL OR status = @status) AND (@day IS NULL OR business_date = @day)
           ORDER BY first_seen_at, id`,
        )
        .all({ status: filter.status ?? null, day: filter.businessDate ?? null });
    },

    /** Marks an open anomaly resolved with a note. False when there is no such open anomaly. */
    async resolve(id: string, note: string, now: Date): Promise<boolean> {
      const result = await write(() =>
        db
          .prepare(
            `UPDATE anomalies SET status = 'resolved', resolved_at = ?, resolution_note = ?
           WHERE id = ? AND status = 'open'`,
          )
          .run(now.toISOString(), note, id),
      );
      return result.changes === 1;
    },
  };
}
