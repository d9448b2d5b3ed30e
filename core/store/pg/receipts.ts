/**
 * Payer receipts on PostgreSQL (the SQLite twin: ../sqlite/receipts.ts): one per order (its unique key),
 * claimed for one attempt at a time by locking its row, every attempt recorded.
 */
import { RECEIPT_QUEUE, receiptJobId } from '../../queues.ts';
import { writeOutbox } from './outbox.ts';
import { statement, type PgDb, type Queryable } from './pool.ts';
import type { ReceiptAttempt, ReceiptRow, ReceiptsRepository } from '../receipts.ts';

const RECEIPT_COLUMNS = `id, order_no AS "orderNo", recipient, created_at AS "createdAt", state,
  sent_at AS "sentAt", message_id AS "messageId"`;

const INSERT = statement(
  `INSERT INTO receipts (order_no, recipient, created_at) VALUES ($1, $2, $3)
   ON CONFLICT (order_no) DO NOTHING RETURNING id`,
);
const BY_ORDER = statement(`SELECT ${RECEIPT_COLUMNS} FROM receipts WHERE order_no = $1`);
const LOCK_BY_ORDER = statement(
  `SELECT ${RECEIPT_COLUMNS}, lease_until AS "leaseUntil" FROM receipts WHERE order_no = $1 FOR UPDATE`,
);
const SET_LEASE = statement('UPDATE receipts SET lease_until = $1 WHERE id = $2');
const ATTEMPTS_OF = statement(
  `SELECT attempt, at, outcome, message_id AS "messageId", detail FROM receipt_attempts WHERE receipt_id = $1
   ORDER BY id`,
);
const ATTEMPT_COUNT = statement('SELECT count(*) AS n FROM receipt_attempts WHERE receipt_id = $1');
const INSERT_ATTEMPT = statement(
  `INSERT INTO receipt_attempts (receipt_id, attempt, at, outcome, message_id, detail)
   VALUES ($1, $2, $3, $4, $5, $6)`,
);
const FINISH = statement(
  'UPDATE receipts SET state = $1, sent_at = $2, message_id = $3, lease_until = NULL WHERE id = $4',
);

/**
 * Queues an order's receipt inside the caller's transaction (the settlement's): a row, and its job in the
 * outbox. An order that has one already gets nothing more.
 */
export async function queueReceipt(
  tx: Queryable,
  orderNo: string,
  recipient: string,
  at: string,
): Promise<void> {
  if (!(await tx.row(INSERT, [orderNo, recipient, at]))) return;
  await writeOutbox(tx, RECEIPT_QUEUE, receiptJobId(orderNo), { orderNo }, at);
}

/** Payer receipts: claimed for one attempt at a time, every attempt recorded. */
export function pgReceipts(db: PgDb): ReceiptsRepository {
  return {
    async of(orderNo) {
      const row = await db.row<ReceiptRow>(BY_ORDER, [orderNo]);
      return row && { ...row, attempts: await db.rows<ReceiptAttempt>(ATTEMPTS_OF, [row.id]) };
    },

    async claim(orderNo, now, leaseUntil) {
      return db.transaction(async (tx) => {
        const row = await tx.row<ReceiptRow & { leaseUntil: string | null }>(LOCK_BY_ORDER, [orderNo]);
        if (!row || row.state === 'sent') return { refused: 'done' as const };
        // Instants compared as Dates: both sides are ISO strings, but only the stored one is normalised.
        if (row.leaseUntil !== null && Date.parse(row.leaseUntil) > Date.parse(now))
          return { refused: 'busy' as const };
        await tx.run(SET_LEASE, [leaseUntil, row.id]);
        const { leaseUntil: _lease, ...claimed } = row;
        const count = await tx.row<{ n: number }>(ATTEMPT_COUNT, [row.id]);
        return { claimed, attempt: (count?.n ?? 0) + 1 };
      });
    },

    async recordAttempt(receiptId, attempt) {
      await db.transaction(async (tx) => {
        await tx.run(INSERT_ATTEMPT, [
          receiptId,
          attempt.attempt,
          attempt.at,
          attempt.outcome,
          attempt.messageId,
          attempt.detail,
        ]);
        if (attempt.outcome === 'failed') await tx.run(SET_LEASE, [null, receiptId]);
        else {
          const sentAt = attempt.outcome === 'sent' ? attempt.at : null;
          await tx.run(FINISH, [attempt.outcome, sentAt, attempt.messageId, receiptId]);
        }
      });
    },
  };
}
