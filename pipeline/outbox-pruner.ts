/**
 * Forgets the outbox rows whose jobs are done and older than the retention (decision 241), as BullMQ
 * removes completed jobs after 7 days (pipeline/retry.ts). The outbox is a transport: what a job did is kept
 * by what it wrote (ledgers, callbacks and their attempts, runs), not by its row. Rows not done (waiting,
 * handed to Redis and unfinished, failed for good) are never touched.
 *
 * Each pass looks at a bounded slice of the outbox, oldest first, from where the last pass stopped, and
 * deletes the done rows of it that are old enough; after reaching rows younger than the retention, the next
 * pass starts from the oldest row again. So a pass costs the same on a small outbox and a huge one, and rows
 * that stay (a failed job at the head) never stop the pruning of the rows behind them.
 */
import type { OutboxRepository } from '../core/store/outbox.ts';

/** Rows looked at per slice, and slices per pass. */
const SLICE = 1000;
const SLICES_PER_PASS = 5;

export interface OutboxPruner {
  /** One pass at `now`: deletes up to SLICE x SLICES_PER_PASS rows; resolves to how many. */
  pass(now: Date): Promise<number>;
}

export function createOutboxPruner(
  outbox: Pick<OutboxRepository, 'oldestAfter' | 'deleteDone'>,
  keepMs: number,
  slice = SLICE,
): OutboxPruner {
  // The id the next slice starts after (0: from the oldest row).
  let after = 0;
  return {
    async pass(now) {
      const cutoff = new Date(now.getTime() - keepMs);
      const cutoffIso = cutoff.toISOString();
      let deleted = 0;
      for (let i = 0; i < SLICES_PER_PASS; i += 1) {
        const rows = await outbox.oldestAfter(after, slice);
        const old = rows.filter((r) => r.doneAt !== null && r.doneAt < cutoffIso).map((r) => r.id);
        if (old.length > 0) deleted += await outbox.deleteDone(old, cutoff);
        const last = rows.at(-1);
        // The end of the outbox, or rows made since the cutoff (none of them or after them is old enough
        // to go, but for a few done late): start again from the oldest next time.
        if (!last || rows.length < slice || last.createdAt >= cutoffIso) {
          after = 0;
          break;
        }
        after = last.id;
      }
      return deleted;
    },
  };
}
