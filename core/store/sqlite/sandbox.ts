import type { Db } from './db.ts';
import { groupCommitter } from './group-commit.ts';
import type { SandboxPayment, SandboxRepository } from '../sandbox.ts';

const COLUMNS = `ref, order_no AS orderNo, method, bank_id AS bankId, amount_sen AS amountSen, outcome,
  txn_id AS txnId, created_at AS createdAt, decided_at AS decidedAt, coalesce(return_path, '') AS returnPath`;

/** The sandbox acquirer's own records (it stands in for a bank, so it keeps its own books). */
export function sqliteSandbox(db: Db): SandboxRepository {
  // Through the connection's group commit: another process's write lock is waited for off this thread.
  const write = groupCommitter(db);
  return {
    async create(row: SandboxPayment): Promise<void> {
      await write(() =>
        db
          .prepare(
            `INSERT INTO sandbox_payments (ref, order_no, method, bank_id, amount_sen, outcome, txn_id, created_at,
           decided_at, return_path)
         VALUES (@ref, @orderNo, @method, @bankId, @amountSen, @outcome, @txnId, @createdAt, @decidedAt,
           @returnPath)`,
          )
          .run(row),
      );
    },

    async get(ref: string): Promise<SandboxPayment | undefined> {
      return db
        .prepare<[string], SandboxPayment>(`SELECT ${COLUMNS} FROM sandbox_payments WHERE ref = ?`)
        .get(ref);
    },

    /** Sets the outcome while it is undecided or pending (a bank resolves a pending payment once). */
    async decide(
      ref: string,
      outcome: string,
      pendingCodes: readonly string[],
      at: string,
    ): Promise<boolean> {
      const placeholders = pendingCodes.map(() => '?').join(', ');
      return write(
        () =>
          db
            .prepare(
              `UPDATE sandbox_payments SET outcome = ?, decided_at = ?
             WHERE ref = ? AND (outcome IS NULL OR outcome IN (${placeholders}))`,
            )
            .run(outcome, at, ref, ...pendingCodes).changes === 1,
      );
    },
  };
}
