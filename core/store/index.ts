import { openDatabase, type Db } from './sqlite/db.ts';
import { sqlitePartners } from './sqlite/partners.ts';
import { sqliteBankPostings } from './sqlite/bank-postings.ts';
import { sqliteAnomalies } from './sqlite/anomalies.ts';
import { sqliteAgencies } from './sqlite/agencies.ts';
import { sqliteOutbox } from './sqlite/outbox.ts';
import { sqliteReportTokens } from './sqlite/report-tokens.ts';
import { sqliteOrders } from './sqlite/orders.ts';
import { sqliteCallbacks } from './sqlite/callbacks.ts';
import { sqlitePaymentReport } from './sqlite/payment-report.ts';
import { sqliteZakatReport } from './sqlite/zakat-report.ts';
import { sqliteLedger } from './sqlite/ledger.ts';
import { sqliteSandbox } from './sqlite/sandbox.ts';
import { sqliteReconRuns } from './sqlite/recon-runs.ts';
import { sqliteReconArchive } from './sqlite/recon-archive.ts';
import { sqliteReconSnapshot } from './sqlite/recon-snapshot.ts';
import { sqliteQrCodes } from './sqlite/qr-codes.ts';
import { sqliteOps } from './sqlite/ops.ts';
import { sqliteReceipts } from './sqlite/receipts.ts';
import { sqliteDashboardUsers } from './sqlite/dashboard-users.ts';
import { dashboardReadsOffThread } from './sqlite/dashboard-reads-off-thread.ts';
import type { PartnersRepository } from './partners.ts';
import type { BankPostingsRepository } from './bank-postings.ts';
import type { AnomaliesRepository } from './anomalies.ts';
import type { AgenciesRepository } from './agencies.ts';
import type { OutboxRepository } from './outbox.ts';
import type { ReportTokensRepository } from './report-tokens.ts';
import type { OrdersRepository } from './orders.ts';
import type { CallbacksRepository } from './callbacks.ts';
import type { PaymentReportRepository } from './payment-report.ts';
import type { ZakatReportRepository } from './zakat-report.ts';
import type { LedgerRepository } from './ledger.ts';
import type { SandboxRepository } from './sandbox.ts';
import type { ReconRunsRepository } from './recon-runs.ts';
import type { ReconArchiveRepository } from './recon-archive.ts';
import type { ReconSnapshotRepository } from './recon-snapshot.ts';
import type { QrCodesRepository } from './qr-codes.ts';
import type { OpsRepository } from './ops.ts';
import type { ReceiptsRepository } from './receipts.ts';
import type { DashboardUsersRepository } from './dashboard-users.ts';
import type { DashboardReadsRepository } from './dashboard-reads.ts';

export type * from './partners.ts';
export type * from './bank-postings.ts';
export type * from './anomalies.ts';
export type * from './agencies.ts';
export type * from './outbox.ts';
export { outboxSignal } from './outbox-signal.ts';
export type * from './report-tokens.ts';
export type * from './orders.ts';
export type * from './callbacks.ts';
export type * from './payment-report.ts';
export type * from './zakat-report.ts';
export type * from './ledger.ts';
export type * from './sandbox.ts';
export type * from './recon-runs.ts';
export type * from './recon-archive.ts';
export type * from './recon-snapshot.ts';
export type * from './qr-codes.ts';
export type * from './ops.ts';
export type * from './receipts.ts';
export type * from './dashboard-users.ts';
export type * from './dashboard-reads.ts';
export { DEFAULT_AGENCY_SETTINGS } from './agencies.ts';
export { TEST_SINK } from './ledger.ts';

/**
 * All SQL lives behind these repositories, one per aggregate and one coarse method per use case. Each is an
 * interface (core/store/<aggregate>.ts) that every engine implements (SQLite: core/store/sqlite/); they
 * return Promises although better-sqlite3 is synchronous, so callers never depend on the engine.
 */
export interface Store {
  readonly partners: PartnersRepository;
  readonly bankPostings: BankPostingsRepository;
  readonly anomalies: AnomaliesRepository;
  readonly agencies: AgenciesRepository;
  readonly outbox: OutboxRepository;
  readonly reportTokens: ReportTokensRepository;
  /** Checkout orders and pay-link payments: creation, attempts, settlement. */
  readonly orders: OrdersRepository;
  /** Merchant callbacks of settled orders: delivery attempts, leases, redelivery. */
  readonly callbacks: CallbacksRepository;
  readonly paymentReport: PaymentReportRepository;
  readonly zakatReport: ZakatReportRepository;
  /** Normalised bank postings and each sink's ledger. */
  readonly ledger: LedgerRepository;
  readonly sandbox: SandboxRepository;
  readonly reconRuns: ReconRunsRepository;
  readonly reconArchive: ReconArchiveRepository;
  readonly reconSnapshot: ReconSnapshotRepository;
  readonly qrCodes: QrCodesRepository;
  readonly receipts: ReceiptsRepository;
  /** The readiness write and the counts metrics read. */
  readonly ops: OpsRepository;
  /** The merchant dashboard's users, sessions and audit log. */
  readonly dashboardUsers: DashboardUsersRepository;
  /** The merchant dashboard's reads, each within one agency. */
  readonly dashboardReads: DashboardReadsRepository;
  /** Cheap liveness probe for /health. */
  ping(): Promise<void>;
  /** Releases the connections (once the work in flight has finished). */
  close(): Promise<void>;
}

/**
 * The SQLite store: a Store, and its file (which tests and benchmarks open raw; the PostgreSQL store has a
 * connection string in its place, and a replay's isolated store is a database of its own there).
 */
export interface SqliteStore extends Store {
  readonly file: string;
}

/** Opens (creating and migrating as needed) the SQLite store at `file`. */
export function openStore(file: string): SqliteStore {
  const db: Db = openDatabase(file);
  const dashboardReads = dashboardReadsOffThread(file);
  return {
    file,
    partners: sqlitePartners(db),
    bankPostings: sqliteBankPostings(db),
    anomalies: sqliteAnomalies(db),
    agencies: sqliteAgencies(db),
    outbox: sqliteOutbox(db),
    reportTokens: sqliteReportTokens(db),
    orders: sqliteOrders(db),
    callbacks: sqliteCallbacks(db),
    paymentReport: sqlitePaymentReport(db),
    zakatReport: sqliteZakatReport(db),
    ledger: sqliteLedger(db),
    sandbox: sqliteSandbox(db),
    reconRuns: sqliteReconRuns(db),
    reconArchive: sqliteReconArchive(db),
    reconSnapshot: sqliteReconSnapshot(file),
    qrCodes: sqliteQrCodes(db),
    receipts: sqliteReceipts(db),
    ops: sqliteOps(db),
    dashboardUsers: sqliteDashboardUsers(db),
    dashboardReads,
    async ping() {
      db.prepare('SELECT 1').get();
    },
    async close() {
      await dashboardReads.close();
      if (db.open) db.close();
    },
  };
}
