export interface ReceiptRow {
  id: number;
  orderNo: string;
  recipient: string;
  createdAt: string;
  state: 'queued' | 'sent' | 'refused';
  sentAt: string | null;
  messageId: string | null;
}

export interface ReceiptAttempt {
  attempt: number;
  at: string;
  outcome: 'sent' | 'failed' | 'refused';
  messageId: string | null;
  /** The mail server's error, or the .eml file written (relative to DATA_DIR). */
  detail: string | null;
}

/**
 * Payer receipts (queued by `orders.settle`, one per order): claimed for one attempt at a time, every
 * attempt recorded.
 */
export interface ReceiptsRepository {
  /** An order's receipt with its attempts, oldest first; undefined when it has none. */
  of(orderNo: string): Promise<(ReceiptRow & { attempts: ReceiptAttempt[] }) | undefined>;

  /**
   * Leases an order's receipt for one attempt, with the number that attempt gets. 'done' once sent (or
   * when there is none); 'busy' while another attempt holds the lease.
   */
  claim(
    orderNo: string,
    now: string,
    leaseUntil: string,
  ): Promise<{ claimed: ReceiptRow; attempt: number } | { refused: 'done' | 'busy' }>;

  /** Records an attempt and releases the lease; a sent or refused attempt settles the receipt's state. */
  recordAttempt(receiptId: number, attempt: ReceiptAttempt): Promise<void>;
}
