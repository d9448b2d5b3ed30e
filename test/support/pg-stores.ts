/**
 * PostgreSQL helpers for tests that need a raw pool beside the store: a migrated database of the file's one
 * test server (test-database.ts), the second half's repositories over such a pool, and the whole store.
 * Tests that run the same assertions on both engines use engines.ts (forEachEngine, onBothEngines).
 */
import type { TestContext } from 'node:test';
import pg from 'pg';
import type { Store } from '../../core/store/index.ts';
import { migratePg } from '../../core/store/pg/migrate.ts';
import { openPgStore } from '../../core/store/pg/index.ts';
import { openPgPool, type PgDb } from '../../core/store/pg/pool.ts';
import { pgOrders } from '../../core/store/pg/orders.ts';
import { pgCallbacks } from '../../core/store/pg/callbacks.ts';
import { pgReceipts } from '../../core/store/pg/receipts.ts';
import { pgPaymentReport } from '../../core/store/pg/payment-report.ts';
import { pgZakatReport } from '../../core/store/pg/zakat-report.ts';
import { pgReconRuns } from '../../core/store/pg/recon-runs.ts';
import { pgReconArchive } from '../../core/store/pg/recon-archive.ts';
import { pgReconSnapshot } from '../../core/store/pg/recon-snapshot.ts';
import { pgQrCodes } from '../../core/store/pg/qr-codes.ts';
import { pgReportTokens } from '../../core/store/pg/report-tokens.ts';
import { pgSandbox } from '../../core/store/pg/sandbox.ts';
import { pgOps } from '../../core/store/pg/ops.ts';
import { pgOutbox } from '../../core/store/pg/outbox.ts';
import { onCleanup } from '../helpers.ts';
import { freshTestDatabase } from './test-database.ts';

/** The repositories of this half, the same interfaces on either engine. */
export type PgHalf = Pick<
  Store,
  | 'orders'
  | 'callbacks'
  | 'receipts'
  | 'paymentReport'
  | 'zakatReport'
  | 'reconRuns'
  | 'reconArchive'
  | 'reconSnapshot'
  | 'qrCodes'
  | 'reportTokens'
  | 'sandbox'
  | 'ops'
  | 'outbox'
>;

/** A new empty database on this file's test server; its URL. */
export function testPgUrl(): Promise<string> {
  return freshTestDatabase();
}

/** A migrated PostgreSQL database (a new one unless `url` is given), its pool closed when `t` ends. */
export async function openTestPg(t: TestContext, url?: string): Promise<PgDb> {
  const db = openPgPool(url ?? (await testPgUrl()), { max: 20 });
  onCleanup(t, () => db.close());
  await migratePg(db);
  return db;
}

/** This half's repositories over a PostgreSQL database. */
export function pgHalf(db: PgDb): PgHalf {
  return {
    orders: pgOrders(db),
    callbacks: pgCallbacks(db),
    receipts: pgReceipts(db),
    paymentReport: pgPaymentReport(db),
    zakatReport: pgZakatReport(db),
    reconRuns: pgReconRuns(db),
    reconArchive: pgReconArchive(db),
    reconSnapshot: pgReconSnapshot(db),
    qrCodes: pgQrCodes(db),
    reportTokens: pgReportTokens(db),
    sandbox: pgSandbox(db),
    ops: pgOps(db),
    outbox: pgOutbox(db),
  };
}

/** The whole PostgreSQL store at `url`, migrated, closed when `t` ends. */
export async function completePgStore(t: TestContext, url: string): Promise<Store> {
  const store = openPgStore(url);
  onCleanup(t, () => store.close());
  await store.ping();
  return store;
}

/**
 * A fresh PostgreSQL store and two connections of another process to its database (connected, migrated,
 * all closed after the test): for tests that hold one session's transaction open while the other works.
 */
export async function storeWithTwoSessions(
  t: TestContext,
): Promise<{ url: string; store: Store; first: pg.Client; second: pg.Client }> {
  const url = await freshTestDatabase();
  const store = openPgStore(url);
  const first = new pg.Client({ connectionString: url });
  const second = new pg.Client({ connectionString: url });
  onCleanup(t, async () => {
    await first.end();
    await second.end();
    await store.close();
  });
  await store.ping();
  await first.connect();
  await second.connect();
  return { url, store, first, second };
}
