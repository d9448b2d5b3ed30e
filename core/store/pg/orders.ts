/**
 * Checkout orders on PostgreSQL (the SQLite twin: ../sqlite/orders.ts). Idempotency is the unique keys':
 * a merchant's repeated refNo meets the partial unique index on (agency_code, ref_no) of checkout orders,
 * never a read-then-write race. Every change of an order locks its row (FOR UPDATE), so an attempt and a
 * settlement of one order run one after the other on any number of machines.
 */
import { queueCallback } from './callbacks.ts';
import { queueReceipt } from './receipts.ts';
import { pgGroupCommitter } from './group-commit.ts';
import { statement, type PgDb, type Queryable } from './pool.ts';
import type {
  AttemptRefusal,
  NewAttempt,
  NewOrder,
  OrderRow,
  OrdersRepository,
  PaymentRow,
  SettleOutcome,
} from '../orders.ts';
import { settlementOf } from '../orders.ts';

export const ORDER_COLUMNS = `order_no AS "orderNo", agency_code AS "agencyCode", ref_no AS "refNo",
  extra_data AS "extraData", payment_category AS "paymentCategory", amount_sen AS "amountSen",
  add_charge_sen AS "addChargeSen", email, return_url AS "returnUrl", payment_method AS "paymentMethod", status,
  debit_auth_code AS "debitAuthCode", fpx_txn_id AS "fpxTxnId", fpx_txn_time AS "fpxTxnTime",
  created_at AS "createdAt", updated_at AS "updatedAt", form_token AS "formToken", acquirer_ref AS "acquirerRef",
  bank_id AS "bankId", bank_name AS "bankName", extras, source, pay_link AS "payLink",
  pay_link_uses AS "payLinkUses"`;

const BY_ORDER = statement(`SELECT ${ORDER_COLUMNS} FROM payments WHERE order_no = $1`);
/**
 * The payment day counts as they stand, to be summed: the folded counts and the rows the payments appended
 * since (decision 246). A FROM item with the columns agency_code, day, approved, method, n, and the
 * overview's sum_sen, failed_n and started_n (decision 251).
 */
export const PAYMENT_DAY_COUNTS_NOW = `(
   SELECT agency_code, day, approved, method, n, sum_sen, failed_n, started_n FROM payment_day_counts
   UNION ALL
   SELECT agency_code, day, approved, method, n, sum_sen, failed_n, started_n FROM payment_day_count_deltas
 ) counts`;
// The day-count rows as they are now, added into payment_day_counts (decision 246), in one statement: only
// the rows this statement's snapshot sees are deleted, rows appended meanwhile wait for the next fold. Only
// the fold updates payment_day_counts, one process at a time (the advisory lock, taken by a statement of its
// own before this one: the fold's snapshot is then taken after the previous fold committed, and sees the keys
// it inserted; taken inside this statement, a fold could start its snapshot just before the previous one
// committed, insert one of the same keys again and fail on the primary key).
// A key already counted is updated and only a new key inserted: a row offered for insert is checked
// (n >= 0) before its conflict is found, and a fold often holds only a payment's -1 for a key (the payment
// was created before the last fold and settled since), which failed every fold from then on.
const FOLD_DAY_COUNTS = statement(
  `WITH gone AS (
     DELETE FROM payment_day_count_deltas
     RETURNING agency_code, day, approved, method, n, sum_sen, failed_n, started_n
   ), sums AS MATERIALIZED (
     SELECT agency_code, day, approved, method, sum(n) AS n, sum(sum_sen) AS sum_sen, sum(failed_n) AS failed_n,
       sum(started_n) AS started_n
     FROM gone GROUP BY 1, 2, 3, 4
     HAVING sum(n) <> 0 OR sum(sum_sen) <> 0 OR sum(failed_n) <> 0 OR sum(started_n) <> 0
   ), updated AS (
     UPDATE payment_day_counts c SET n = c.n + s.n, sum_sen = c.sum_sen + s.sum_sen,
       failed_n = c.failed_n + s.failed_n, started_n = c.started_n + s.started_n
     FROM sums s
     WHERE c.agency_code = s.agency_code AND c.day = s.day AND c.approved = s.approved AND c.method = s.method
   ), inserted AS (
     INSERT INTO payment_day_counts (agency_code, day, approved, method, n, sum_sen, failed_n, started_n)
     SELECT * FROM sums s WHERE NOT EXISTS (
       SELECT 1 FROM payment_day_counts c
       WHERE c.agency_code = s.agency_code AND c.day = s.day AND c.approved = s.approved AND c.method = s.method)
   )
   SELECT count(*)::int AS n FROM gone`,
);
/** pg_try_advisory_xact_lock key of the fold ('amdc'). */
const FOLD_LOCK = 0x616d6463;
const FOLD_LOCK_TAKEN = statement('SELECT pg_try_advisory_xact_lock($1) AS mine');
const LOCK_ORDER = statement(`SELECT ${ORDER_COLUMNS} FROM payments WHERE order_no = $1 FOR UPDATE`);
// The merchant's order of a refNo (pay-link payments share their link's refNo and are not it).
const BY_REF = statement(
  `SELECT ${ORDER_COLUMNS} FROM payments WHERE agency_code = $1 AND ref_no = $2 AND source = 'checkout'`,
);
const INSERT_ORDER_COLUMNS = `(order_no, agency_code, ref_no, extra_data, payment_category, amount_sen, email,
  return_url, status, created_at, updated_at, form_token, extras, source, pay_link, pay_link_uses)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $9, $10, $11, $12, $13, $14)`;
// A repeated (agency, refNo) of a checkout order inserts nothing: the caller gets the existing order.
const INSERT_CHECKOUT = statement(
  `INSERT INTO payments ${INSERT_ORDER_COLUMNS}
   ON CONFLICT (agency_code, ref_no) WHERE source = 'checkout' DO NOTHING RETURNING ${ORDER_COLUMNS}`,
);
// The new row comes back from the insert itself: no read after it (a round trip fewer per checkout).
const INSERT_PAY_LINK = statement(`INSERT INTO payments ${INSERT_ORDER_COLUMNS} RETURNING ${ORDER_COLUMNS}`);
const INSERT_EVENT = statement(
  'INSERT INTO payment_events (order_no, at, status, debit_auth_code, source) VALUES ($1, $2, $3, $4, $5)',
);
// A once-link is taken by a payment that succeeded, or one the bank is working on (pending with an
// attempt): a second payer would pay twice. A failed or abandoned payment leaves it free.
const LINK_STATE = statement(
  `SELECT count(*) FILTER (WHERE status = 'success') AS paid,
     count(*) FILTER (WHERE status = 'pending' AND acquirer_ref IS NOT NULL) AS "inProgress"
   FROM payments WHERE pay_link = $1 AND order_no <> $2`,
);
// One link's attempts one at a time, on every machine (released at commit): two payers of one household
// QR cannot both see the link free.
const LOCK_LINK = statement(`SELECT pg_advisory_xact_lock(hashtextextended('pay-link:' || $1, 0))`);
const START_PAYMENT = statement(
  `UPDATE payments SET payment_method = $2, bank_id = $3, bank_name = $4, add_charge_sen = $5,
     acquirer_ref = $6, updated_at = $7
   WHERE order_no = $1`,
);
const UNPAID_BEFORE = statement(
  `SELECT ${ORDER_COLUMNS} FROM payments WHERE status = 'pending' AND acquirer_ref IS NULL AND created_at < $1
   ORDER BY created_at LIMIT $2`,
);
const AWAITING_ACQUIRER = statement(
  `SELECT ${ORDER_COLUMNS} FROM payments WHERE status = 'pending' AND acquirer_ref IS NOT NULL
   ORDER BY created_at LIMIT $1`,
);
const INSERT_ANOMALY = statement(
  `INSERT INTO payment_anomalies (order_no, stored_status, incoming_code, source, seen_at)
   VALUES ($1, $2, $3, $4, $5)`,
);
const APPLY_RESULT = statement(
  `UPDATE payments SET status = $1, debit_auth_code = $2, fpx_txn_id = $3, fpx_txn_time = $4, updated_at = $5
   WHERE order_no = $6`,
);
const INSERT_PAYMENT = statement(
  `INSERT INTO payments (order_no, agency_code, ref_no, extra_data, payment_category, amount_sen, add_charge_sen,
     email, return_url, payment_method, status, debit_auth_code, fpx_txn_id, fpx_txn_time, created_at, updated_at,
     source, pay_link)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
);

async function linkState(
  q: Queryable,
  link: string,
  except: string,
): Promise<'free' | 'paid' | 'in-progress'> {
  const state = await q.row<{ paid: number; inProgress: number }>(LINK_STATE, [link, except]);
  if ((state?.paid ?? 0) > 0) return 'paid';
  return (state?.inProgress ?? 0) > 0 ? 'in-progress' : 'free';
}

/** Checkout orders, their attempts, and their settlement by the acquirer's result. */
export function pgOrders(db: PgDb): OrdersRepository {
  const inGroup = pgGroupCommitter(db);
  return {
    async order(orderNo) {
      return db.row<OrderRow>(BY_ORDER, [orderNo]);
    },

    async orderByRef(agency, refNo) {
      return db.row<OrderRow>(BY_REF, [agency, refNo]);
    },

    async createOrder(order: NewOrder) {
      const { payLink } = order;
      // Orders of one turn share a transaction, each answered after its commit (decision 177).
      return inGroup(async (tx) => {
        const inserted = await tx.row<OrderRow>(payLink ? INSERT_PAY_LINK : INSERT_CHECKOUT, [
          order.orderNo,
          order.agencyCode,
          order.refNo,
          order.extraData,
          order.paymentCategory,
          order.amountSen,
          order.email,
          order.returnUrl,
          order.at,
          order.formToken,
          order.extras ? JSON.stringify(order.extras) : null,
          payLink ? 'pay-link' : 'checkout',
          payLink?.link ?? null,
          payLink?.uses ?? null,
        ]);
        if (!inserted) {
          // The unique index saw the refNo: the order that holds it, committed before our insert waited.
          const existing = await tx.row<OrderRow>(BY_REF, [order.agencyCode, order.refNo]);
          if (!existing) throw new Error(`no order of ${order.agencyCode} ${order.refNo} after a conflict`);
          return { created: false, order: existing };
        }
        await tx.run(INSERT_EVENT, [order.orderNo, order.at, 'pending', null, 'checkout']);
        return { created: true, order: inserted };
      });
    },

    async insert(row: PaymentRow, source: string) {
      await db.transaction(async (tx) => {
        await tx.run(INSERT_PAYMENT, [
          row.orderNo,
          row.agencyCode,
          row.refNo,
          row.extraData,
          row.paymentCategory,
          row.amountSen,
          row.addChargeSen,
          row.email,
          row.returnUrl,
          row.paymentMethod,
          row.status,
          row.debitAuthCode,
          row.fpxTxnId,
          row.fpxTxnTime,
          row.createdAt,
          row.updatedAt,
          row.source,
          row.payLink,
        ]);
        await tx.run(INSERT_EVENT, [row.orderNo, row.createdAt, row.status, row.debitAuthCode, source]);
      });
    },

    async payLinkState(link) {
      return linkState(db, link, '');
    },

    async startAttempt(orderNo: string, attempt: NewAttempt) {
      return db.transaction(async (tx): Promise<AttemptRefusal | undefined> => {
        const order = await tx.row<OrderRow>(LOCK_ORDER, [orderNo]);
        if (!order || order.status !== 'pending' || order.acquirerRef !== null) return 'already-started';
        if (order.payLink !== null && order.payLinkUses === 'once') {
          await tx.run(LOCK_LINK, [order.payLink]);
          const state = await linkState(tx, order.payLink, orderNo);
          if (state === 'paid') return 'link-paid';
          if (state === 'in-progress') return 'link-in-progress';
        }
        await tx.run(START_PAYMENT, [
          orderNo,
          attempt.paymentMethod,
          attempt.bankId,
          attempt.bankName,
          attempt.addChargeSen,
          attempt.acquirerRef,
          attempt.at,
        ]);
        return undefined;
      });
    },

    async unpaidBefore(before, limit) {
      return db.rows<OrderRow>(UNPAID_BEFORE, [before, limit]);
    },

    async awaitingAcquirer(limit) {
      return db.rows<OrderRow>(AWAITING_ACQUIRER, [limit]);
    },

    async settle(orderNo, result, at, callback, receipt = () => undefined) {
      return db.transaction(async (tx): Promise<{ outcome: SettleOutcome; order: OrderRow }> => {
        const current = await tx.row<OrderRow>(LOCK_ORDER, [orderNo]);
        if (!current) throw new Error(`no order ${orderNo}`);
        const outcome = settlementOf(current, result);
        if (outcome === 'contradiction')
          await tx.run(INSERT_ANOMALY, [orderNo, current.status, result.code, result.source, at]);
        if (outcome !== 'apply') return { outcome, order: current };
        await tx.run(APPLY_RESULT, [result.status, result.code, result.txnId, result.txnTime, at, orderNo]);
        await tx.run(INSERT_EVENT, [orderNo, at, result.status, result.code, result.source]);
        const order = (await tx.row<OrderRow>(BY_ORDER, [orderNo]))!;
        const draft = callback(order);
        if (draft) await queueCallback(tx, orderNo, result.status, draft, at);
        const recipient = receipt(order);
        if (recipient) await queueReceipt(tx, orderNo, recipient, at);
        return { outcome: 'applied', order };
      });
    },

    async foldDayCounts() {
      return db.transaction(async (tx) => {
        if (!(await tx.row<{ mine: boolean }>(FOLD_LOCK_TAKEN, [FOLD_LOCK]))?.mine) return 0;
        return (await tx.row<{ n: number }>(FOLD_DAY_COUNTS))?.n ?? 0;
      });
    },
  };
}
