import type { Db } from './db.ts';
import { outboxWriter } from './outbox.ts';
import { receiptQueuer } from './receipts.ts';
import type { PaymentRow } from './payments.ts';

export const CALLBACK_QUEUE = 'callbacks';

/** A checkout order: the report's payment row plus what checkout needs to carry it through. */
export interface OrderRow extends PaymentRow {
  /** A signed pay link's extras as JSON ({} when it had none); null otherwise. */
  extras: string | null;
  payLinkUses: PayLinkUses | null;
  formToken: string | null;
  acquirerRef: string | null;
  bankId: string | null;
  bankName: string | null;
}

/** How often a pay link may be paid: once (a household's fitrah QR), or by many payers (a poster). */
export type PayLinkUses = 'once' | 'many';

/** A new checkout order: unpaid (pending, no method, no result yet), created and updated at `at`. */
export interface NewOrder {
  orderNo: string;
  agencyCode: string;
  refNo: string;
  extraData: string | null;
  paymentCategory: string | null;
  amountSen: number;
  email: string;
  /** '' for a pay-link order, which has no merchant to call back. */
  returnUrl: string;
  formToken: string;
  at: string;
  /** The extras of the signed pay link the order is opened from; absent or null otherwise. */
  extras?: Readonly<Record<string, string>> | null;
  /** The pay link a pay-link payment comes from, and how often it may be paid; absent for checkout. */
  payLink?: { link: string; uses: PayLinkUses };
}

/** Why a payment attempt was not started: another tab started one, or the order's once-link is taken. */
export type AttemptRefusal = 'already-started' | 'link-paid' | 'link-in-progress';

/** What an acquirer reported, mapped to a status by the rule of spec 2.4. */
export interface PaymentResult {
  status: PaymentRow['status'];
  code: string;
  txnId: string | null;
  txnTime: string | null;
  source: string;
}

export type SettleOutcome = 'applied' | 'unchanged' | 'contradiction';

/** A callback to queue: where, and the unsigned form fields. */
export interface CallbackDraft {
  url: string;
  fields: Record<string, string>;
}

export interface CallbackRow {
  id: number;
  orderNo: string;
  agencyCode: string;
  status: string;
  url: string;
  fields: string;
  createdAt: string;
  state: 'queued' | 'delivered' | 'superseded' | 'gone' | 'dead';
  attempts: number;
  nextAttemptAt: string | null;
  finishedAt: string | null;
}

export interface CallbackAttempt {
  at: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responsePrefix: string;
}

/** After an attempt: finished in a final state, or retried at a time (a new outbox row then). */
export type AttemptVerdict =
  { state: 'delivered' | 'gone' | 'dead' } | { state: 'queued'; nextAttemptAt: string; jobId: string };

const ORDER_COLUMNS = `order_no AS orderNo, agency_code AS agencyCode, ref_no AS refNo, extra_data AS extraData,
  payment_category AS paymentCategory, amount_sen AS amountSen, add_charge_sen AS addChargeSen, email,
  return_url AS returnUrl, payment_method AS paymentMethod, status, debit_auth_code AS debitAuthCode,
  fpx_txn_id AS fpxTxnId, fpx_txn_time AS fpxTxnTime, created_at AS createdAt, updated_at AS updatedAt,
  form_token AS formToken, acquirer_ref AS acquirerRef, bank_id AS bankId, bank_name AS bankName, extras,
  source, pay_link AS payLink, pay_link_uses AS payLinkUses`;

const CALLBACK_COLUMNS = `c.id, c.order_no AS orderNo, p.agency_code AS agencyCode, c.status, c.url, c.fields,
  c.created_at AS createdAt, c.state, c.attempts, c.next_attempt_at AS nextAttemptAt, c.finished_at AS finishedAt`;

export const callbackJobId = (callbackId: number, attempt: number, suffix = ''): string =>
  `callback:${callbackId}:${attempt}${suffix}`;

/** Checkout orders, their settlement by the acquirer's result, and the merchant callbacks that follow. */
export function checkoutRepository(db: Db) {
  const writeOutbox = outboxWriter(db);
  const queueReceipt = receiptQueuer(db);
  const orderBy = db.prepare<[string], OrderRow>(`SELECT ${ORDER_COLUMNS} FROM payments WHERE order_no = ?`);
  // The merchant's order of a refNo (pay-link payments share their link's refNo and are not it).
  const orderByRef = db.prepare<[string, string], OrderRow>(
    `SELECT ${ORDER_COLUMNS} FROM payments WHERE agency_code = ? AND ref_no = ? AND source = 'checkout'`,
  );
  const insertOrder = db.prepare<
    Omit<NewOrder, 'extras' | 'payLink'> & {
      extras: string | null;
      source: string;
      payLink: string | null;
      uses: string | null;
    }
  >(
    `INSERT INTO payments (order_no, agency_code, ref_no, extra_data, payment_category, amount_sen, email,
       return_url, status, created_at, updated_at, form_token, extras, source, pay_link, pay_link_uses)
     VALUES (@orderNo, @agencyCode, @refNo, @extraData, @paymentCategory, @amountSen, @email, @returnUrl,
       'pending', @at, @at, @formToken, @extras, @source, @payLink, @uses)`,
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

  // The statements of settlement and delivery, prepared once: they run for every payment and attempt.
  const supersedeQueued = db.prepare<[string, string]>(
    `UPDATE callbacks SET state = 'superseded', finished_at = ? WHERE order_no = ? AND state = 'queued'`,
  );
  const insertCallback = db.prepare<[string, string, string, string, string, string]>(
    `INSERT INTO callbacks (order_no, status, url, fields, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const insertAnomaly = db.prepare<[string, string, string, string, string]>(
    `INSERT INTO payment_anomalies (order_no, stored_status, incoming_code, source, seen_at) VALUES (?, ?, ?, ?, ?)`,
  );
  const applyResult = db.prepare<[string, string, string | null, string | null, string, string]>(
    `UPDATE payments SET status = ?, debit_auth_code = ?, fpx_txn_id = ?, fpx_txn_time = ?, updated_at = ?
     WHERE order_no = ?`,
  );
  const callbackById = db.prepare<[number], CallbackRow>(
    `SELECT ${CALLBACK_COLUMNS} FROM callbacks c JOIN payments p USING (order_no) WHERE c.id = ?`,
  );
  const leasedOfOrder = db.prepare<[string, number, string], { n: number }>(
    `SELECT count(*) AS n FROM callbacks WHERE order_no = ? AND id <= ? AND lease_until > ?`,
  );
  const setLease = db.prepare<[string, number]>('UPDATE callbacks SET lease_until = ? WHERE id = ?');
  const insertAttempt = db.prepare<[number, string, number | null, number, string | null, string]>(
    `INSERT INTO callback_attempts (callback_id, at, status_code, latency_ms, error, response_prefix)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const scheduleRetry = db.prepare<[string, number]>(
    `UPDATE callbacks SET attempts = attempts + 1, lease_until = NULL, next_attempt_at = ? WHERE id = ?`,
  );
  const stateOf = db.prepare<[number], { state: string }>('SELECT state FROM callbacks WHERE id = ?');
  const finish = db.prepare<[string, string, string, number]>(
    `UPDATE callbacks SET attempts = attempts + 1, lease_until = NULL, next_attempt_at = NULL,
       state = CASE WHEN state = 'queued' OR ? = 'delivered' THEN ? ELSE state END, finished_at = ?
     WHERE id = ?`,
  );

  /** Queues a callback for the order, superseding any older one not yet delivered (no stale status). */
  function queueCallback(orderNo: string, status: string, draft: CallbackDraft, at: string): number {
    supersedeQueued.run(at, orderNo);
    const id = Number(
      insertCallback.run(orderNo, status, draft.url, JSON.stringify(draft.fields), at, at).lastInsertRowid,
    );
    writeOutbox(CALLBACK_QUEUE, callbackJobId(id, 0), { callbackId: id }, at);
    return id;
  }

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
      return db
        .transaction(() => {
          const existing = payLink ? undefined : orderByRef.get(order.agencyCode, order.refNo);
          if (existing) return { created: false, order: existing };
          insertOrder.run({
            ...fields,
            extras: order.extras ? JSON.stringify(order.extras) : null,
            source: payLink ? 'pay-link' : 'checkout',
            payLink: payLink?.link ?? null,
            uses: payLink?.uses ?? null,
          });
          insertEvent.run(order.orderNo, order.at, 'pending', null, 'checkout');
          return { created: true, order: orderBy.get(order.orderNo) as OrderRow };
        })
        .immediate();
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
    async startAttempt(
      orderNo: string,
      attempt: {
        paymentMethod: NonNullable<PaymentRow['paymentMethod']>;
        bankId: string | null;
        bankName: string | null;
        addChargeSen: number;
        acquirerRef: string;
        at: string;
      },
    ): Promise<AttemptRefusal | undefined> {
      return db
        .transaction((): AttemptRefusal | undefined => {
          const order = orderBy.get(orderNo);
          if (!order || order.status !== 'pending' || order.acquirerRef !== null) return 'already-started';
          if (order.payLink !== null && order.payLinkUses === 'once') {
            const state = linkState.get(order.payLink, orderNo);
            if ((state?.paid ?? 0) > 0) return 'link-paid';
            if ((state?.inProgress ?? 0) > 0) return 'link-in-progress';
          }
          startPayment.run({ orderNo, ...attempt });
          return undefined;
        })
        .immediate();
    },

    /** Orders nobody took to the bank, made before `before`, oldest first: the expiry sweep's work list. */
    async unpaidBefore(before: string, limit: number): Promise<OrderRow[]> {
      return unpaidBefore.all(before, limit);
    },

    /**
     * Applies an acquirer result in one transaction with its event, callback and the payer's receipt (to
     * the address `receipt` gives, if any). Only pending moves: to success or failed, or (the first time the
     * acquirer answers pending) pending with its code. A result contradicting a final status is recorded
     * as an anomaly and not applied.
     */
    async settle(
      orderNo: string,
      result: PaymentResult,
      at: string,
      callback: (order: OrderRow) => CallbackDraft | undefined,
      receipt: (order: OrderRow) => string | undefined = () => undefined,
    ): Promise<{ outcome: SettleOutcome; order: OrderRow }> {
      return db
        .transaction(() => {
          const current = orderBy.get(orderNo);
          if (!current) throw new Error(`no order ${orderNo}`);
          if (current.status !== 'pending') {
            if (current.status === result.status) return { outcome: 'unchanged' as const, order: current };
            insertAnomaly.run(orderNo, current.status, result.code, result.source, at);
            return { outcome: 'contradiction' as const, order: current };
          }
          // Pending stays pending: news only the first time the acquirer answers (its code was empty).
          if (result.status === 'pending' && (current.debitAuthCode ?? '') !== '') {
            return { outcome: 'unchanged' as const, order: current };
          }
          applyResult.run(result.status, result.code, result.txnId, result.txnTime, at, orderNo);
          insertEvent.run(orderNo, at, result.status, result.code, result.source);
          const order = orderBy.get(orderNo) as OrderRow;
          const draft = callback(order);
          if (draft) queueCallback(orderNo, result.status, draft, at);
          const recipient = receipt(order);
          if (recipient) queueReceipt(orderNo, recipient, at);
          return { outcome: 'applied' as const, order };
        })
        .immediate();
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

    /**
     * Leases a queued callback for one attempt. 'busy' while an older callback of the same order is still
     * being delivered, so the merchant never gets a newer status before an older one.
     */
    async claimCallback(
      id: number,
      now: string,
      leaseUntil: string,
    ): Promise<{ claimed: CallbackRow } | { refused: 'done' | 'busy' }> {
      return db
        .transaction(() => {
          const row = callbackById.get(id);
          if (!row || row.state !== 'queued') return { refused: 'done' as const };
          const leased = leasedOfOrder.get(row.orderNo, id, now);
          if ((leased?.n ?? 0) > 0) return { refused: 'busy' as const };
          setLease.run(leaseUntil, id);
          return { claimed: row };
        })
        .immediate();
    },

    /** Records an attempt and its verdict in one transaction; a retry gets its own outbox row. */
    async finishAttempt(id: number, attempt: CallbackAttempt, verdict: AttemptVerdict): Promise<void> {
      db.transaction(() => {
        insertAttempt.run(
          id,
          attempt.at,
          attempt.statusCode,
          Math.round(attempt.latencyMs),
          attempt.error,
          attempt.responsePrefix,
        );
        if (verdict.state === 'queued') {
          // A callback superseded meanwhile stays superseded: the newer one carries the news.
          scheduleRetry.run(verdict.nextAttemptAt, id);
          if (stateOf.get(id)?.state === 'queued') {
            writeOutbox(CALLBACK_QUEUE, verdict.jobId, { callbackId: id }, attempt.at, verdict.nextAttemptAt);
          }
        } else {
          finish.run(verdict.state, verdict.state, attempt.at, id);
        }
      }).immediate();
    },

    /** Puts a callback back in line later without counting an attempt (its order was busy). */
    async deferCallback(id: number, jobId: string, at: string, notBefore: string): Promise<void> {
      db.transaction(() => writeOutbox(CALLBACK_QUEUE, jobId, { callbackId: id }, at, notBefore)).immediate();
    },

    /** Sends an order's latest callback again, as a new callback (the old one keeps its history). */
    async redeliver(orderNo: string, at: string): Promise<number | undefined> {
      return db
        .transaction(() => {
          const latest = db
            .prepare<[string], { status: string; url: string; fields: string }>(
              'SELECT status, url, fields FROM callbacks WHERE order_no = ? ORDER BY id DESC LIMIT 1',
            )
            .get(orderNo);
          if (!latest) return undefined;
          const fields = JSON.parse(latest.fields) as Record<string, string>;
          return queueCallback(orderNo, latest.status, { url: latest.url, fields }, at);
        })
        .immediate();
    },

    /**
     * Callbacks newest first: every one, or only the failing: given up (dead), refused (gone), or still
     * queued after a failed attempt (retrying: what ops must see while a merchant is down).
     */
    async callbacks(filter: { failed?: boolean; limit: number }): Promise<CallbackRow[]> {
      return db
        .prepare<[number, number], CallbackRow>(
          `SELECT ${CALLBACK_COLUMNS} FROM callbacks c JOIN payments p USING (order_no)
           WHERE (? = 0 OR c.state IN ('dead', 'gone') OR (c.state = 'queued' AND c.attempts > 0))
           ORDER BY c.id DESC LIMIT ?`,
        )
        .all(filter.failed ? 1 : 0, filter.limit);
    },

    /** An order's callbacks, oldest first, each with its attempts (for the fpxrequest report). */
    async callbacksOf(orderNo: string): Promise<(CallbackRow & { attemptLog: CallbackAttempt[] })[]> {
      const attempts = db.prepare<[number], CallbackAttempt>(
        `SELECT at, status_code AS statusCode, latency_ms AS latencyMs, error, response_prefix AS responsePrefix
         FROM callback_attempts WHERE callback_id = ? ORDER BY id`,
      );
      return db
        .prepare<[string], CallbackRow>(
          `SELECT ${CALLBACK_COLUMNS} FROM callbacks c JOIN payments p USING (order_no) WHERE c.order_no = ? ORDER BY c.id`,
        )
        .all(orderNo)
        .map((row) => ({ ...row, attemptLog: attempts.all(row.id) }));
    },
  };
}
