/**
 * The PostgreSQL store: the same Store as SQLite's, over one pool. Migrations are applied when it opens
 * (under their advisory lock) and every repository call waits for them, so opening stays synchronous like
 * SQLite's. Repositories not yet written for PostgreSQL (issue 17) are listed in `incomplete`; a process
 * refuses to start on such a store (core/bootstrap.ts), and a call to one of them rejects.
 */
import type { Store } from '../index.ts';
import { pgAgencies } from './agencies.ts';
import { pgAnomalies } from './anomalies.ts';
import { pgBankPostings } from './bank-postings.ts';
import { pgLedger } from './ledger.ts';
import { migratePg } from './migrate.ts';
import { pgOutbox } from './outbox.ts';
import { pgPartners } from './partners.ts';
import { openPgPool, type PgPoolOptions } from './pool.ts';
import { pgReportTokens } from './report-tokens.ts';
import { pgOrders } from './orders.ts';
import { pgCallbacks } from './callbacks.ts';
import { pgPaymentReport } from './payment-report.ts';
import { pgZakatReport } from './zakat-report.ts';
import { pgSandbox } from './sandbox.ts';
import { pgReconRuns } from './recon-runs.ts';
import { pgReconArchive } from './recon-archive.ts';
import { pgReconSnapshot } from './recon-snapshot.ts';
import { pgQrCodes } from './qr-codes.ts';
import { pgReceipts } from './receipts.ts';
import { pgOps } from './ops.ts';

export interface PgStore extends Store {
  /** Repositories with no PostgreSQL implementation yet. */
  readonly incomplete: readonly string[];
}

/** Every method of `repository` waits for `ready` (the migrations) before it runs. */
function afterReady<T extends object>(ready: Promise<unknown>, repository: T): T {
  return new Proxy(repository, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        ready.then(() => (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
}

/** A repository of which PostgreSQL has no implementation yet: every call rejects, naming it. */
function notYet<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get: (_target, key) =>
      typeof key === 'string'
        ? () =>
            Promise.reject(new Error(`store.${name}.${key} has no PostgreSQL implementation yet (issue 17)`))
        : undefined,
  });
}

/** Opens the store on the database at `url` (postgres://...); connections are made on first use. */
export function openPgStore(url: string, options: PgPoolOptions = {}): PgStore {
  const db = openPgPool(url, options);
  const ready = migratePg(db);
  // Surfaced by the first repository call (and by ping); not an unhandled rejection meanwhile.
  ready.catch(() => undefined);
  let closing: Promise<void> | undefined;
  const incomplete: string[] = [];
  const missing = <T extends object>(name: string): T => {
    incomplete.push(name);
    return notYet<T>(name);
  };
  return {
    incomplete,
    partners: afterReady(ready, pgPartners(db)),
    bankPostings: afterReady(ready, pgBankPostings(db)),
    anomalies: afterReady(ready, pgAnomalies(db)),
    agencies: afterReady(ready, pgAgencies(db)),
    outbox: afterReady(ready, pgOutbox(db)),
    ledger: afterReady(ready, pgLedger(db)),
    reportTokens: afterReady(ready, pgReportTokens(db)),
    orders: afterReady(ready, pgOrders(db)),
    callbacks: afterReady(ready, pgCallbacks(db)),
    paymentReport: afterReady(ready, pgPaymentReport(db)),
    zakatReport: afterReady(ready, pgZakatReport(db)),
    sandbox: afterReady(ready, pgSandbox(db)),
    reconRuns: afterReady(ready, pgReconRuns(db)),
    reconArchive: afterReady(ready, pgReconArchive(db)),
    reconSnapshot: afterReady(ready, pgReconSnapshot(db)),
    qrCodes: afterReady(ready, pgQrCodes(db)),
    receipts: afterReady(ready, pgReceipts(db)),
    ops: afterReady(ready, pgOps(db)),
    // The merchant dashboard's (issue 18) come next.
    dashboardUsers: missing('dashboardUsers'),
    dashboardReads: missing('dashboardReads'),
    async ping() {
      await ready;
      await db.run('SELECT 1');
    },
    close() {
      closing ??= ready.catch(() => undefined).then(() => db.close());
      return closing;
    },
  };
}
