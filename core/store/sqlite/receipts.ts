import type { Db } from './db.ts';
import { outboxWriter } from './outbox.ts';
import { groupCommitter } from './group-commit.ts';
import { RECEIPT_QUEUE, receiptJobId } from '../../queues.ts';
import type { ReceiptAttempt, ReceiptRow, ReceiptsRepository } from '../receipts.ts';

const RECEIPT_COLUMNS = `id, order_no AS orderNo, recipient, created_at AS createdAt, state, sent_at AS sentAt,
  message_id AS messageId`;

/**
 * Queues an order's receipt inside the caller's transaction (the settlement's): a row, and its job in the
 * outbox. An order that has one already gets nothing more.
 */
export function receiptQueuer(db: Db) {
  const writeOutbox = outboxWriter(db);
  const insert = db.prepare<[string, string, string]>(
    `INSERT INTO receipts (order_no, recipient, created_at) VALUES (?, ?, ?) ON CONFLICT (order_no) DO NOTHING`,
  );
  return (orderNo: string, recipient: string, at: string): void => {
    if (insert.run(orderNo, recipient, at).changes === 0) return;
    writeOutbox(RECEIPT_QUEUE, receiptJobId(orderNo), { orderNo }, at);
  };
}

/** Payer receipts: claimed for one attempt at a time, every attempt recorded. */
export function sqliteReceipts(db: Db): ReceiptsRepository {
  const write = groupCommitter(db);
  const byOrder = db.prepare<[string], ReceiptRow>(
    `SELECT ${RECEIPT_COLUMNS} FROM receipts WHERE order_no = ?`,
  );
  const leasedByOrder = db.prepare<[string], ReceiptRow & { leaseUntil: string | null }>(
    `SELECT ${RECEIPT_COLUMNS}, lease_until AS leaseUntil FROM receipts WHERE order_no = ?`,
  );
  const setLease = db.prepare<[string | null, number]>('UPDATE receipts SET lease_until = ? WHERE id = ?');
  const attemptsOf = db.prepare<[number], ReceiptAttempt>(
    `SELECT attempt, at, outcome, message_id AS messageId, detail FROM receipt_attempts WHERE receipt_id = ?
     ORDER BY id`,
  );
  const insertAttempt = db.prepare<[number, number, string, string, string | null, string | null]>(
    `INSERT INTO receipt_attempts (receipt_id, attempt, at, outcome, message_id, detail) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const finish = db.prepare<[string, string | null, string | null, number]>(
    `UPDATE receipts SET state = ?, sent_at = ?, message_id = ?, lease_until = NULL WHERE id = ?`,
  );
  return {
    /** An order's receipt with its attempts, oldest first; undefined when it has none. */
    async of(orderNo: string): Promise<(ReceiptRow & { attempts: ReceiptAttempt[] }) | undefined> {
      const row = byOrder.get(orderNo);
      return row && { ...row, attempts: attemptsOf.all(row.id) };
    },

    /**
     * Leases an order's receipt for one attempt, with the number that attempt gets. 'done' once sent (or
     * when there is none); 'busy' while another attempt holds the lease.
     */
    async claim(
      orderNo: string,
      now: string,
      leaseUntil: string,
    ): Promise<{ claimed: ReceiptRow; attempt: number } | { refused: 'done' | 'busy' }> {
      return write(() => {
        const row = leasedByOrder.get(orderNo);
        if (!row || row.state === 'sent') return { refused: 'done' as const };
        if (row.leaseUntil !== null && row.leaseUntil > now) return { refused: 'busy' as const };
        setLease.run(leaseUntil, row.id);
        const { leaseUntil: _lease, ...claimed } = row;
        return { claimed, attempt: attemptsOf.all(row.id).length + 1 };
      });
    },

    /** Records an attempt and releases the lease; a sent or refused attempt settles the receipt's state. */
    async recordAttempt(receiptId: number, attempt: ReceiptAttempt): Promise<void> {
      await write(() => {
        insertAttempt.run(
          receiptId,
          attempt.attempt,
          attempt.at,
          attempt.outcome,
          attempt.messageId,
          attempt.detail,
        );
        if (attempt.outcome === 'failed') setLease.run(null, receiptId);
        else {
          const sentAt = attempt.outcome === 'sent' ? attempt.at : null;
          finish.run(attempt.outcome, sentAt, attempt.messageId, receiptId);
        }
      });
    },
  };
}
