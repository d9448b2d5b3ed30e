import type { PaymentEvent, PaymentRow } from './orders.ts';

export interface PaymentFilter {
  /** One agency, or several: the combined report of a token covering them, in one order. */
  agency: string | readonly string[];
  /** Kuala Lumpur calendar days (YYYY-MM-DD), both included, on created_at. */
  firstDay: string;
  lastDay: string;
  isApproved?: boolean;
  sellerOrderNo?: string;
}

/** An order as the fpxrequest report finds it: the row, its signed pay-link extras, and its events. */
export type FoundPayment = PaymentRow & { extras: string | null; events: PaymentEvent[] };

/** The payment report's reads (payment, fpxrequest, user transactions), in report order. */
export interface PaymentReportRepository {
  /** One page of the agencies' payments and the total, from one snapshot; a deep page costs about the first. */
  page(filter: PaymentFilter, limit: number, offset: number): Promise<{ rows: PaymentRow[]; total: number }>;

  /** Every matching payment, in report order, streamed in chunks (memory stays flat). */
  all(filter: PaymentFilter): AsyncGenerator<PaymentRow>;

  /**
   * Orders of the agencies, by order number or refNo, with their events and signed pay-link extras. A
   * refNo is the merchant's order first (unique per agency); pay-link payments share their link's refNo,
   * and follow, paid ones first, newest first.
   */
  find(agencies: readonly string[], key: { orderNo?: string; refNo?: string }): Promise<FoundPayment[]>;

  /**
   * One page of a payer's payments within the given agencies, newest first (then by order number), and
   * their total, from one snapshot (decision 247).
   */
  byEmail(
    email: string,
    agencies: readonly string[],
    limit: number,
    offset: number,
  ): Promise<{ rows: PaymentRow[]; total: number }>;

  /** Every payment of a payer within the given agencies, in the order of byEmail, streamed in chunks. */
  allByEmail(email: string, agencies: readonly string[]): AsyncGenerator<PaymentRow>;
}
