/** A payment as the payment report shows it: a merchant's checkout order or a pay-link payment. */
export interface PaymentRow {
  orderNo: string;
  agencyCode: string;
  refNo: string;
  extraData: string | null;
  paymentCategory: string | null;
  amountSen: number;
  addChargeSen: number;
  email: string;
  returnUrl: string;
  paymentMethod: 'fpx' | 'card' | 'ewallet' | null;
  status: 'pending' | 'success' | 'failed';
  debitAuthCode: string | null;
  fpxTxnId: string | null;
  fpxTxnTime: string | null;
  createdAt: string;
  updatedAt: string;
  /** 'checkout': the merchant's order (POST /v2/checkout); 'pay-link': a payment made on a pay page. */
  source: 'checkout' | 'pay-link';
  /** For a pay-link payment, the link it came from (path and signed query); null otherwise. */
  payLink: string | null;
}

/** One change of a payment's status, and who said so (checkout, an acquirer, the expiry sweep). */
export interface PaymentEvent {
  at: string;
  status: string;
  debitAuthCode: string | null;
  source: string;
}

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

/** The payer's choice and the acquirer's reference, recorded when a payment attempt starts. */
export interface NewAttempt {
  paymentMethod: NonNullable<PaymentRow['paymentMethod']>;
  bankId: string | null;
  bankName: string | null;
  addChargeSen: number;
  acquirerRef: string;
  at: string;
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
  /**
   * The attempt the result was decided on: the order's acquirer reference as its caller read it (null: no
   * attempt yet, as the unpaid-order sweep reads it). Undefined: not checked.
   */
  attempt?: string | null;
  /**
   * A conclusion of amil's own from the order still looking pending (the sweeps' XA and XP), not an answer
   * of the acquirer's.
   */
  ownTimeout?: boolean;
}

export type SettleOutcome = 'applied' | 'unchanged' | 'contradiction';

/**
 * What a result does to the order as it is now, read under its lock (both engines settle by this).
 * - Decided on another attempt than the order's now, it is stale and changes nothing: the unpaid-order sweep
 *   read an order with no attempt, and the payer went to the bank before the sweep settled it (failing it
 *   then lost the bank's approval).
 * - A final payment moves no more. A result of the same status, a pending answer (an enquiry asked before the
 *   final answer came) or a timeout of amil's own (decided while the order looked pending) is old news; only a
 *   final answer of the acquirer's that differs is a contradiction, recorded as an anomaly.
 * - A pending payment takes a final result, or its first pending answer (its code was empty): later pending
 *   answers are no news.
 */
export function settlementOf(current: OrderRow, result: PaymentResult): 'apply' | SettleOutcome {
  if (result.attempt !== undefined && result.attempt !== current.acquirerRef) return 'unchanged';
  if (current.status !== 'pending') {
    const oldNews =
      current.status === result.status || result.status === 'pending' || result.ownTimeout === true;
    return oldNews ? 'unchanged' : 'contradiction';
  }
  if (result.status === 'pending' && (current.debitAuthCode ?? '') !== '') return 'unchanged';
  return 'apply';
}

/** A callback to queue: where, and the unsigned form fields. */
export interface CallbackDraft {
  url: string;
  fields: Record<string, string>;
}

/** Checkout orders, their payment attempts, and their settlement by the acquirer's result. */
export interface OrdersRepository {
  order(orderNo: string): Promise<OrderRow | undefined>;

  /** The merchant's (checkout) order of a refNo; pay-link payments are found by their order number. */
  orderByRef(agency: string, refNo: string): Promise<OrderRow | undefined>;

  /**
   * Creates an order. A merchant's order unless (agency, refNo) exists: then nothing is written and the
   * existing order is returned, for the caller to resume or refuse. A pay-link payment is always new: one
   * visitor never meets another's order.
   */
  createOrder(order: NewOrder): Promise<{ created: boolean; order: OrderRow }>;

  /** Stores a payment as given, with its first event (tests and benchmarks seed payments this way). */
  insert(row: PaymentRow, source: string): Promise<void>;

  /** Whether a once-link may be paid now: not when paid, nor while another payment of it is at the bank. */
  payLinkState(link: string): Promise<'free' | 'paid' | 'in-progress'>;

  /**
   * Records the payer's choice and the acquirer's reference: only once per order, only while the order
   * is pending with no attempt yet, and for a once-link's payment only while its link is free (in the same
   * transaction, so two payers of one household QR cannot both reach the bank). Undefined when started.
   */
  startAttempt(orderNo: string, attempt: NewAttempt): Promise<AttemptRefusal | undefined>;

  /** Orders nobody took to the bank, made before `before`, oldest first: the expiry sweep's work list. */
  unpaidBefore(before: string, limit: number): Promise<OrderRow[]>;

  /** Pending payments handed to an acquirer, oldest first: the status enquiry's work list. */
  awaitingAcquirer(limit: number): Promise<OrderRow[]>;

  /**
   * Applies an acquirer result in one transaction with its event, callback and the payer's receipt (to
   * the address `receipt` gives, if any), as `settlementOf` decides under the order's lock: only pending
   * moves, a stale result changes nothing, and one contradicting a final status is recorded as an anomaly
   * and not applied. `callback` and `receipt` run inside the transaction: keep them pure.
   */
  settle(
    orderNo: string,
    result: PaymentResult,
    at: string,
    callback: (order: OrderRow) => CallbackDraft | undefined,
    receipt?: (order: OrderRow) => string | undefined,
  ): Promise<{ outcome: SettleOutcome; order: OrderRow }>;

  /**
   * Folds the day-count rows each payment appended into `payment_day_counts` (PostgreSQL, decision 246);
   * returns how many rows it folded. Run now and again by the pipeline's upkeep; the counts are the same
   * before and after. SQLite keeps its day counts in place: nothing to fold.
   */
  foldDayCounts(): Promise<number>;
}
