/**
 * The PostgreSQL store: the same Store as SQLite's, over one pool. Migrations are applied when it opens
 * (under their advisory lock) and every repository call waits for them, so opening stays synchronous like
 * SQLite's. A database that cannot be reached then (not started yet, restarting) fails the calls made
 * meanwhile as an outage, and the next call tries the migrations again: a process opened before its
 * database works once it is up, without a restart (decision 253). Every repository of the Store has its
 * PostgreSQL implementation: the Store type makes a missing one a compile error, so no run-time list of
 * missing repositories is kept.
 */
import type { Store } from '../index.ts';
import { pgAgencies } from './agencies.ts';
import { pgAnomalies } from './anomalies.ts';
import { pgBankPostings } from './bank-postings.ts';
import { pgLedger } from './ledger.ts';
import { migratePg } from './migrate.ts';
import { pgOutbox } from './outbox.ts';
import { pgPartners } from './partners.ts';
import { openPgPool, type PgDb, type PgPoolOptions } from './pool.ts';
import { isStoreOutage } from '../outage.ts';
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
import { pgDashboardUsers } from './dashboard-users.ts';
import { pgDashboardReads } from './dashboard-reads.ts';

/**
 * The migrations, applied by the first call and shared by the calls that come while they run. An attempt
 * the database could not take (an outage) is made again by the next call; any other failure (a wrong
 * collation, a migration refused) stays, and every call fails with it.
 */
function migrationsOnce(db: PgDb): { ready(): Promise<void>; running(): Promise<void> | undefined } {
  let attempt: Promise<void> | undefined;
  return {
    ready() {
      attempt ??= migratePg(db).then(
        () => undefined,
        (err: unknown) => {
          if (isStoreOutage(err)) attempt = undefined;
          throw err;
        },
      );
      return attempt;
    },
    /** The attempt under way or settled, without starting one. */
    running: () => attempt,
  };
}

/** Every method of `repository` waits for `ready()` (the migrations) before it runs. */
function afterReady<T extends object>(ready: () => Promise<void>, repository: T): T {
  return new Proxy(repository, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...a: unknown[]) => unknown;
      // A stream (async generator: the report exports) stays one: it waits inside, on its first read.
      if (value.constructor.name === 'AsyncGeneratorFunction')
        return async function* (...args: unknown[]) {
          await ready();
          yield* method.apply(target, args) as AsyncGenerator<unknown>;
        };
      return (...args: unknown[]) => ready().then(() => method.apply(target, args));
    },
  });
}

/** Opens the store on the database at `url` (postgres://...); connections are made on first use. */
export function openPgStore(url: string, options: PgPoolOptions = {}): Store {
  const db = openPgPool(url, options);
  const migrations = migrationsOnce(db);
  const ready = () => migrations.ready();
  // Begun at once; a failure is surfaced by the first repository call (and by ping), not as an unhandled
  // rejection meanwhile.
  ready().catch(() => undefined);
  let closing: Promise<void> | undefined;
  return {
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
    dashboardUsers: afterReady(ready, pgDashboardUsers(db)),
    dashboardReads: afterReady(ready, pgDashboardReads(db)),
    async ping() {
      await ready();
      await db.run('SELECT 1');
    },
    close() {
      // An attempt under way is waited for; none is started to close.
      closing ??= (migrations.running() ?? Promise.resolve()).catch(() => undefined).then(() => db.close());
      return closing;
    },
  };
}
