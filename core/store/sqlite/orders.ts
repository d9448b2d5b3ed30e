import type { Db } from './db.ts';
import { callbackQueuer } from './callbacks.ts';
import { receiptQueuer } from './receipts.ts';
import { groupCommitter } from './group-commit.ts';
import type {
  NewAttempt,
  NewOrder,
  OrderRow,
  OrdersRepository,
  PaymentResult,
  SettleOutcome,
  CallbackDraft,
  AttemptRefusal,
  PaymentRow,
} from '../orders.ts';
import { settlementOf } from '../orders.ts';

const ORDER_COLUMNS = `order_no AS orderNo, agency_code AS agencyCode, ref_no AS refNo, extra_data AS extraData,
  payment_category AS paymentCategory, amount_sen AS amountSen, add_charge_sen AS addChargeSen, email,
  return_url AS returnUrl, payment_method AS paymentMethod, status, debit_auth_code AS debitAuthCode,
  fpx_txn_id AS fpxTxnId, fpx_txn_time AS fpxTxnTime, created_at AS createdAt, updated_at AS updatedAt,
  form_token AS formToken, acquirer_ref AS acquirerRef, bank_id AS bankId, bank_name AS bankName, extras,
  source, pay_link AS payLink, pay_link_uses AS payLinkUses`;

/** Checkout orders, their attempts, and their settlement by the acquirer's result. */
export function sqliteOrders(db: Db): OrdersRepository {
  const queueCallback = callbackQueuer(db);
  const queueReceipt = receiptQueuer(db);
  // Checkouts arriving together share one commit (one fsync): issue 17, decision 165.
  const inGroup = groupCommitter(db);
  const orderBy = db.prepare<[string], OrderRow>(`SELECT ${ORDER_COLUMNS} FROM payments WHERE order_no = ?`);
  // The merchant's order of a refNo (pay-link payments share their link's refNo and are not it).
  const orderByRef = db.prepare<[string, string], OrderRow>(
    `SELECT ${ORDER_COLUMNS} FROM payments WHERE agency_code = ? AND ref_no = ? AND source = 'checkout'`,
  );
  // One statement inserts and returns the new row; a merchant's refNo seen before inserts nothing (the
  // partial unique index of checkout orders) and returns no row, and then the existing order is read.
  const insertOrder = db.prepare<
    Omit<NewOrder, 'extras' | 'payLink'> & {
      extras: string | null;
      source: string;
      payLink: string | null;
      uses: string | null;
    },
    OrderRow
  >(
    `INSERT INTO payments (order_no, agency_code, ref_no, extra_data, payment_category, amount_sen, email,
       return_url, status, created_at, updated_at, form_token, extras, source, pay_link, pay_link_uses)
     VALUES (@orderNo, @agencyCode, @refNo, @extraData, @paymentCategory, @amountSen, @email, @returnUrl,
       'pending', @at, @at, @formToken, @extras, @source, @payLink, @uses)
     ON CONFLICT (agency_code, ref_no) WHERE source = 'checkout' DO NOTHING
     RETURNING ${ORDER_COLUMNS}`,
  );
  // A once-link is taken by a payment that succeeded, or one the bank is working on (pending with an
  // attempt): a second payer would pay twice. A failed or abandoned payment leaves it free.
  const linkState = db.prepare<[string, string], { paid: number; inProgress: number }>(
    `SELECT coalesce(sum(status = 'success'), 0) AS paid,
       coalesce(sum(status = 'pending' AND acquirer_ref IS NOT NULL), 0) AS inProgress
     FROM payments WHERE pay_link = ? AND order_no <> ?`,
  );
  const insertEvent = db.prepare<[string, string, string, string | null, string]>(
    'INSERT INTO payment_events (order_no, at, status, debit_auth_code, source) VALUES (?, ?, ?, ?, ?)',
  );

  const startPayment = db.prepare(
    `UPDATE payments SET payment_method = @paymentMethod, bank_id = @bankId, bank_name = @bankName,
       add_charge_sen = @addChargeSen, acquirer_ref = @acquirerRef, updated_at = @at
     WHERE order_no = @orderNo`,
  );
  const unpaidBefore = db.prepare<[string, number], OrderRow>(
    `SELECT ${ORDER_COLUMNS} FROM payments WHERE status = 'pending' AND acquirer_ref IS NULL AND created_at < ?
     ORDER BY created_at LIMIT ?`,
  );

  // The statements of settlement, prepared once: they run for every payment.
  const insertAnomaly = db.prepare<[string, string, string, string, string]>(
    `INSERT INTO payment_anomalies (order_no, stored_status, incoming_code, source, seen_at) VALUES (?, ?, ?, ?, ?)`,
  );
  const applyResult = db.prepare<[string, string, string | null, string | null, string, string]>(
    `UPDATE payments SET status = ?, debit_auth_code = ?, fpx_txn_id = ?, fpx_txn_time = ?, updated_at = ?
     WHERE order_no = ?`,
  );
  const insertPayment = db.prepare<PaymentRow>(
    `INSERT INTO payments (order_no, agency_code, ref_no, extra_data, payment_category, amount_sen, add_charge_sen,
       email, return_url, payment_method, status, debit_auth_code, fpx_txn_id, fpx_txn_time, created_at, updated_at,
       source, pay_link)
     VALUES (@orderNo, @agencyCode, @refNo, @extraData, @paymentCategory, @amountSen, @addChargeSen, @email,
       @returnUrl, @paymentMethod, @status, @debitAuthCode, @fpxTxnId, @fpxTxnTime, @createdAt, @updatedAt,
       @source, @payLink)`,
  );

  return {
    async order(orderNo: string): Promise<OrderRow | undefined> {
      return orderBy.get(orderNo);
    },

    /** The merchant's (checkout) order of a refNo; pay-link payments are found by their order number. */
    async orderByRef(agency: string, refNo: string): Promise<OrderRow | undefined> {
      return orderByRef.get(agency, refNo);
    },

    /**
     * Creates an order. A merchant's order unless (agency, refNo) exists: then nothing is written and the
     * existing order is returned, for the caller to resume or refuse. A pay-link payment is always new: one
     * visitor never meets another's order.
     */
    async createOrder(order: NewOrder): Promise<{ created: boolean; order: OrderRow }> {
      const { payLink, ...fields } = order;
      return inGroup(() => {
        const created = insertOrder.get({
          ...fields,
          extras: order.extras ? JSON.stringify(order.extras) : null,
          source: payLink ? 'pay-link' : 'checkout',
          payLink: payLink?.link ?? null,
          uses: payLink?.uses ?? null,
        });
        if (!created) {
          const existing = orderByRef.get(order.agencyCode, order.refNo);
          if (!existing) throw new Error(`no order of ${order.agencyCode} ${order.refNo} after a conflict`);
          return { created: false, order: existing };
        }
        insertEvent.run(order.orderNo, order.at, 'pending', null, 'checkout');
        return { created: true, order: created };
      });
    },

    async insert(row: PaymentRow, source: string): Promise<void> {
      await inGroup(() => {
        insertPayment.run(row);
        insertEvent.run(row.orderNo, row.createdAt, row.status, row.debitAuthCode, source);
      });
    },

    /** Whether a once-link may be paid now: not when paid, nor while another payment of it is at the bank. */
    async payLinkState(link: string): Promise<'free' | 'paid' | 'in-progress'> {
      const state = linkState.get(link, '');
      if ((state?.paid ?? 0) > 0) return 'paid';
      return (state?.inProgress ?? 0) > 0 ? 'in-progress' : 'free';
    },

    /**
     * Records the payer's choice and the acquirer's reference: only once per order, only while the order
     * is pending with no attempt yet, and for a once-link's payment only while its link is free (in the same
     * transaction, so two payers of one household QR cannot both reach the bank). Undefined when started.
     */
    async startAttempt(orderNo: string, attempt: NewAttempt): Promise<AttemptRefusal | undefined> {
      return inGroup((): AttemptRefusal | undefined => {
        const order = orderBy.get(orderNo);
        if (!order || order.status !== 'pending' || order.acquirerRef !== null) return 'already-started';
        if (order.payLink !== null && order.payLinkUses === 'once') {
          const state = linkState.get(order.payLink, orderNo);
          if ((state?.paid ?? 0) > 0) return 'link-paid';
          if ((state?.inProgress ?? 0) > 0) return 'link-in-progress';
        }
        startPayment.run({ orderNo, ...attempt });
        return undefined;
      });
    },

    /** Orders nobody took to the bank, made before `before`, oldest first: the expiry sweep's work list. */
    async unpaidBefore(before: string, limit: number): Promise<OrderRow[]> {
      return unpaidBefore.all(before, limit);
    },

    /**
     * Applies an acquirer result in one transaction with its event, callback and the payer's receipt (to
     * the address `receipt` gives, if any), as `settlementOf` decides (../orders.ts).
     */
    async settle(
      orderNo: string,
      result: PaymentResult,
      at: string,
      callback: (order: OrderRow) => CallbackDraft | undefined,
      receipt: (order: OrderRow) => string | undefined = () => undefined,
    ): Promise<{ outcome: SettleOutcome; order: OrderRow }> {
      return inGroup(() => {
        const current = orderBy.get(orderNo);
        if (!current) throw new Error(`no order ${orderNo}`);
        const outcome = settlementOf(current, result);
        if (outcome === 'contradiction')
          insertAnomaly.run(orderNo, current.status, result.code, result.source, at);
        if (outcome !== 'apply') return { outcome, order: current };
        applyResult.run(result.status, result.code, result.txnId, result.txnTime, at, orderNo);
        insertEvent.run(orderNo, at, result.status, result.code, result.source);
        const order = orderBy.get(orderNo) as OrderRow;
        const draft = callback(order);
        if (draft) queueCallback(orderNo, result.status, draft, at);
        const recipient = receipt(order);
        if (recipient) queueReceipt(orderNo, recipient, at);
        return { outcome: 'applied' as const, order };
      });
    },

    /** Pending payments handed to an acquirer, oldest first: the status enquiry's work list. */
    async awaitingAcquirer(limit: number): Promise<OrderRow[]> {
      return db
        .prepare<[number], OrderRow>(
          `SELECT ${ORDER_COLUMNS} FROM payments WHERE status = 'pending' AND acquirer_ref IS NOT NULL
           ORDER BY created_at LIMIT ?`,
        )
        .all(limit);
    },

    // payment_day_counts is kept in place by its triggers, in the payment's transaction.
    async foldDayCounts() {
      return 0;
    },
  };
}
