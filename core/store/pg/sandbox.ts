/** The sandbox acquirer's books on PostgreSQL (the SQLite twin: ../sqlite/sandbox.ts). */
import { statement, type PgDb } from './pool.ts';
import type { SandboxPayment, SandboxRepository } from '../sandbox.ts';

const INSERT = statement(
  `INSERT INTO sandbox_payments (ref, order_no, method, bank_id, amount_sen, outcome, txn_id, created_at,
     decided_at, return_path)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
);
const BY_REF = statement(
  `SELECT ref, order_no AS "orderNo", method, bank_id AS "bankId", amount_sen AS "amountSen", outcome,
     txn_id AS "txnId", created_at AS "createdAt", decided_at AS "decidedAt",
     coalesce(return_path, '') AS "returnPath"
   FROM sandbox_payments WHERE ref = $1`,
);
// One statement: a payment decided by two pages at once is decided once.
const DECIDE = statement(
  `UPDATE sandbox_payments SET outcome = $1, decided_at = $2
   WHERE ref = $3 AND (outcome IS NULL OR outcome = ANY($4::text[]))`,
);

/** The sandbox acquirer's own records (it stands in for a bank, so it keeps its own books). */
export function pgSandbox(db: PgDb): SandboxRepository {
  return {
    async create(row) {
      await db.run(INSERT, [
        row.ref,
        row.orderNo,
        row.method,
        row.bankId,
        row.amountSen,
        row.outcome,
        row.txnId,
        row.createdAt,
        row.decidedAt,
        row.returnPath,
      ]);
    },

    async get(ref) {
      return db.row<SandboxPayment>(BY_REF, [ref]);
    },

    async decide(ref, outcome, pendingCodes, at) {
      return (await db.run(DECIDE, [outcome, at, ref, [...pendingCodes]])) === 1;
    },
  };
}
