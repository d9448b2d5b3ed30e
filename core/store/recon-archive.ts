import type { PaymentEvent, PaymentRow } from './orders.ts';

/** One archived webhook body, verbatim, or an excerpt holding only the records of postings in question. */
export interface ArchivedBatch {
  partnerId: string;
  receivedAt: string;
  /** The body as received (`excerpt` false), or `{"transactions":[...]}` with some of its records. */
  body: Buffer;
  excerpt: boolean;
}

export interface ArchivedPayment {
  /** The order as made and paid; its status comes from its events. */
  payment: Pick<
    PaymentRow,
    | 'orderNo'
    | 'agencyCode'
    | 'refNo'
    | 'extraData'
    | 'paymentCategory'
    | 'amountSen'
    | 'addChargeSen'
    | 'email'
    | 'returnUrl'
    | 'paymentMethod'
    | 'createdAt'
  > &
    // Absent in archives exported before pay-link payments had their own orders: a checkout order then.
    Partial<Pick<PaymentRow, 'source' | 'payLink'>> & { payLinkUses?: string | null };
  events: PaymentEvent[];
  anomalies: { storedStatus: string; incomingCode: string; source: string; seenAt: string }[];
}

/**
 * What a replay of one business day needs, read from the archive as of an instant, and the way back in
 * (docs/reconciliation.md, "Replay").
 */
export interface ReconArchiveRepository {
  /**
   * Every webhook body received from the start of the day until `asOf` (verbatim), and, from earlier
   * bodies, the records of the postings the day's workbooks show (an excerpt: a posting pending at the
   * start of the day, or of this day, or changed during it, with its whole history); and the checkout
   * payments likewise. Replayed into an empty store, these give the same workbooks.
   */
  exportDay(day: string, asOf: Date): Promise<{ batches: ArchivedBatch[]; payments: ArchivedPayment[] }>;

  /** Puts archived checkout payments into a (replay) store as they were: the row, its events, anomalies. */
  importPayments(payments: readonly ArchivedPayment[]): Promise<void>;
}
