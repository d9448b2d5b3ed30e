import { openDatabase, type Db } from './db.ts';
import { partnersRepository } from './partners.ts';
import { bankPostingsRepository } from './bank-postings.ts';
import { anomaliesRepository } from './anomalies.ts';
import { agenciesRepository } from './agencies.ts';
import { outboxRepository } from './outbox.ts';
import { reportTokensRepository } from './report-tokens.ts';
import { reportsRepository } from './reports.ts';
import { paymentsRepository } from './payments.ts';
import { pipelineRepository } from './pipeline.ts';
import { checkoutRepository } from './checkout.ts';
import { sandboxRepository } from './sandbox.ts';
import { reconRunsRepository } from './recon-runs.ts';
import { reconArchiveRepository } from './recon-archive.ts';
import { qrCodesRepository } from './qr-codes.ts';
import { opsRepository } from './ops.ts';
import { receiptsRepository } from './receipts.ts';
import { dashboardReadsRepository, type DashboardReadsRepository } from './dashboard-reads.ts';
import { dashboardUsersRepository, type DashboardUsersRepository } from './dashboard-users.ts';

export type { PreparedRecord, IngestBatchInput, PostingStatus, StoredPosting } from './bank-postings.ts';
export { NORMALISE_QUEUE } from './bank-postings.ts';
export type { AnomalyRow } from './anomalies.ts';
export type { AgencyRow, AgencySettings, AddChargeRule, PaymentMethod } from './agencies.ts';
export { DEFAULT_AGENCY_SETTINGS } from './agencies.ts';
export type { ReportTokenRow } from './report-tokens.ts';
export type { ZakatReportRow } from './reports.ts';
export type { PaymentRow, PaymentEvent, PaymentFilter } from './payments.ts';
export type {
  OrderRow,
  NewOrder,
  PayLinkUses,
  AttemptRefusal,
  PaymentResult,
  SettleOutcome,
  CallbackDraft,
  CallbackRow,
  CallbackAttempt,
  AttemptVerdict,
} from './checkout.ts';
export { CALLBACK_QUEUE, callbackJobId } from './checkout.ts';
export type { SandboxPayment } from './sandbox.ts';
export type { ReconRunRow, ReconDelivery, ReconTrigger, NewReconRun } from './recon-runs.ts';
export { RECON_EMAIL_QUEUE, reconEmailJobId } from './recon-runs.ts';
export type { ReceiptRow, ReceiptAttempt } from './receipts.ts';
export { RECEIPT_QUEUE, receiptJobId } from './receipts.ts';
export type { ArchivedBatch, ArchivedPayment } from './recon-archive.ts';
export type {
  ReconItem,
  ReconMovement,
  ReconAnomaly,
  ReconChannel,
  ReconStatus,
  ReconSnapshot,
} from './recon-snapshot.ts';
export type { QrCodeRow, QrCodeKind } from './qr-codes.ts';
export type { OutboxRow, QueueStats } from './outbox.ts';
export type { NormalisedFields, BatchVersion, LedgerEntry, Job } from './pipeline.ts';
export { TEST_SINK } from './pipeline.ts';
export type { PartnerSummary, PartnerPasswordRow } from './partners.ts';
export type {
  DashboardReadsRepository,
  DashboardOverview,
  DayFigures,
  DashboardRun,
  RunMail,
  DashboardPaymentFilter,
  DashboardPostingFilter,
  DashboardCallback,
  CallbackState,
} from './dashboard-reads.ts';
export type { OutboxBacklog, CallbackCount, ReconHealth, UnledgeredVersions } from './ops.ts';
export type {
  DashboardRole,
  DashboardMembership,
  DashboardUser,
  DashboardCredentials,
  DashboardSession,
  DashboardUsersRepository,
  AuditEntry,
} from './dashboard-users.ts';

/**
 * All SQL lives behind these repositories, one coarse function per use case. They return Promises
 * although better-sqlite3 is synchronous, so another store could replace this one without touching callers.
 */
export interface Store {
  readonly file: string;
  readonly partners: ReturnType<typeof partnersRepository>;
  readonly bankPostings: ReturnType<typeof bankPostingsRepository>;
  readonly anomalies: ReturnType<typeof anomaliesRepository>;
  readonly agencies: ReturnType<typeof agenciesRepository>;
  readonly outbox: ReturnType<typeof outboxRepository>;
  readonly reportTokens: ReturnType<typeof reportTokensRepository>;
  readonly reports: ReturnType<typeof reportsRepository>;
  readonly payments: ReturnType<typeof paymentsRepository>;
  readonly pipeline: ReturnType<typeof pipelineRepository>;
  readonly checkout: ReturnType<typeof checkoutRepository>;
  readonly sandbox: ReturnType<typeof sandboxRepository>;
  readonly reconRuns: ReturnType<typeof reconRunsRepository>;
  readonly reconArchive: ReturnType<typeof reconArchiveRepository>;
  readonly qrCodes: ReturnType<typeof qrCodesRepository>;
  readonly receipts: ReturnType<typeof receiptsRepository>;
  /** The merchant dashboard's users, sessions and audit log. */
  readonly dashboardUsers: DashboardUsersRepository;
  /** The readiness write and the counts metrics read. */
  readonly ops: ReturnType<typeof opsRepository>;
  /** The merchant dashboard's reads, each within one agency. */
  readonly dashboardReads: DashboardReadsRepository;
  /** Cheap liveness probe for /health. */
  ping(): Promise<void>;
  close(): void;
}

/** Opens (creating and migrating as needed) the SQLite store at `file`. */
export function openStore(file: string): Store {
  const db: Db = openDatabase(file);
  return {
    file,
    partners: partnersRepository(db),
    bankPostings: bankPostingsRepository(db),
    anomalies: anomaliesRepository(db),
    agencies: agenciesRepository(db),
    outbox: outboxRepository(db),
    reportTokens: reportTokensRepository(db),
    reports: reportsRepository(db),
    payments: paymentsRepository(db),
    pipeline: pipelineRepository(db),
    checkout: checkoutRepository(db),
    sandbox: sandboxRepository(db),
    reconRuns: reconRunsRepository(db, file),
    reconArchive: reconArchiveRepository(db),
    qrCodes: qrCodesRepository(db),
    receipts: receiptsRepository(db),
    dashboardUsers: dashboardUsersRepository(db),
    ops: opsRepository(db),
    dashboardReads: dashboardReadsRepository(db),
    async ping() {
      db.prepare('SELECT 1').get();
    },
    close() {
      if (db.open) db.close();
    },
  };
}
