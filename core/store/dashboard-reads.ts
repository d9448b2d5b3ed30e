import type { PaymentEvent, PaymentRow } from './orders.ts';
import type { CallbackAttempt, CallbackRow } from './callbacks.ts';
import type { ZakatReportRow } from './zakat-report.ts';
import type { ReconRunRow } from './recon-runs.ts';

/** Count and sum in sen. */
export interface DashTotal {
  count: number;
  sumSen: number;
}

/** One business day (UTC+8) of an agency: bank postings and checkout payments together. */
export interface DayFigures {
  day: string;
  collected: DashTotal;
  pending: number;
  failed: number;
  /** Postings whose latest version carries exception codes. */
  exceptions: number;
}

/** Whether a run's workbook reached its recipients. */
export type RunMail = 'sent' | 'failed' | 'queued' | 'not-mailed';

export type DashboardRun = ReconRunRow & { mail: RunMail; mailedAt: string | null };

export interface DashboardOverview {
  /** Every day from firstDay to lastDay, oldest first, zero when nothing happened. */
  days: DayFigures[];
  callbacksFailing: number;
  /** Bank records that contradicted a stored one, and acquirer results after a final one, not resolved. */
  openAnomalies: number;
  lastNightly: DashboardRun | null;
}

/** The payment report's filters as the dashboard offers them (days are UTC+8, on created_at). */
export interface DashboardPaymentFilter {
  agency: string;
  firstDay: string;
  lastDay: string;
  approved?: boolean;
  orderNo?: string;
  refNo?: string;
  method?: 'fpx' | 'card' | 'ewallet';
}

export interface DashboardPostingFilter {
  agency: string;
  firstDay: string;
  lastDay: string;
  /** An exception code, or 'any' for every posting with one. */
  code?: string;
  state?: string;
  type?: string;
}

export type CallbackState = CallbackRow['state'];
export type DashboardCallback = CallbackRow & { failing: boolean; attemptLog: CallbackAttempt[] };

/**
 * What the merchant dashboard reads, always within one agency: the agency is part of every query, so
 * another agency's order, run or posting is simply not found.
 */
export interface DashboardReadsRepository {
  overview(agency: string, firstDay: string, lastDay: string): Promise<DashboardOverview>;
  paymentsPage(
    filter: DashboardPaymentFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: PaymentRow[]; total: number }>;
  /** Every matching payment in report order, read 1,000 at a time by keyset (for the exports). */
  paymentRows(filter: DashboardPaymentFilter): AsyncGenerator<PaymentRow>;
  order(
    agency: string,
    orderNo: string,
  ): Promise<
    | (PaymentRow & {
        events: PaymentEvent[];
        callbacks: (CallbackRow & { attemptLog: CallbackAttempt[] })[];
      })
    | undefined
  >;
  postingsPage(
    filter: DashboardPostingFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: ZakatReportRow[]; total: number }>;
  /** The exception codes the agency's postings of those days carry (the code filter's choices). */
  postingCodes(filter: Pick<DashboardPostingFilter, 'agency' | 'firstDay' | 'lastDay'>): Promise<string[]>;
  callbacksPage(
    filter: { agency: string; state?: CallbackState | 'failing' },
    limit: number,
    offset: number,
  ): Promise<{ rows: DashboardCallback[]; total: number; byState: Record<string, number> }>;
  runs(
    agency: string,
    filter: { firstDay?: string; lastDay?: string; limit: number },
  ): Promise<DashboardRun[]>;
  run(agency: string, id: number): Promise<DashboardRun | undefined>;
}
