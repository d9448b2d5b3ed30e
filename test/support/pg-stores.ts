/**
 * The second half of the repositories on both engines: SQLite (the whole store in a temporary file) and
 * PostgreSQL (a database of its own on one server per test file, started with the file's first PostgreSQL
 * test and stopped after its last). The same assertions hold on both. Also copies a SQLite store's rows
 * into a PostgreSQL database as they are, so a test can give both engines the very same inputs.
 */
import { after, test, type TestContext } from 'node:test';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openStore, type Store } from '../../core/store/index.ts';
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
import { onCleanup, tempDir } from '../helpers.ts';
import { startPostgres, type TestPostgres } from './postgres.ts';

export type Engine = 'sqlite' | 'postgresql';

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

export interface EngineHalf extends PgHalf {
  engine: Engine;
  /** Adds an agency (orders refer to one). */
  addAgency(code: string): Promise<void>;
  /** Runs SQL straight on the engine, for what no repository reads (a test's own check). */
  sql<R>(text: string): Promise<R[]>;
}

let server: Promise<TestPostgres> | undefined;
after(async () => {
  if (server) await (await server).stop();
});

/** A new empty database on this file's test server; its URL. */
export async function testPgUrl(): Promise<string> {
  server ??= startPostgres();
  return (await server).createTestDatabase();
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

/**
 * The whole PostgreSQL store at `url`: the first half's repositories (core/store/pg/index.ts) with this
 * half's over a pool of its own, until the engine's store lists them itself. Both pools close with it.
 */
export async function completePgStore(t: TestContext, url: string): Promise<Store> {
  const first = openPgStore(url);
  const db = openPgPool(url, { max: 10 });
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= Promise.all([first.close(), db.close()]).then(() => undefined));
  onCleanup(t, close);
  // Migrated (the store migrates as it opens) before this half's repositories, which do not wait, run.
  await first.ping();
  const store: Store & { incomplete: readonly string[] } = { ...first, ...pgHalf(db), incomplete: [], close };
  return store;
}

function openSqlite(t: TestContext): Promise<EngineHalf> {
  const store = openStore(path.join(tempDir(t), 'amil.db'));
  onCleanup(t, () => store.close());
  const raw = new Database(store.file, { readonly: true });
  onCleanup(t, () => raw.close());
  return Promise.resolve({
    ...store,
    engine: 'sqlite',
    async addAgency(code) {
      await store.agencies.create({ code, name: `Agency ${code}`, apiKey: `key-${code}`, now: new Date() });
    },
    sql: <R>(text: string) => Promise.resolve(raw.prepare<[], R>(text).all()),
  });
}

async function openPostgres(t: TestContext): Promise<EngineHalf> {
  const db = await openTestPg(t);
  return {
    ...pgHalf(db),
    engine: 'postgresql',
    async addAgency(code) {
      await db.run('INSERT INTO agencies (code, name, created_at, api_key) VALUES ($1, $2, $3, $4)', [
        code,
        `Agency ${code}`,
        new Date().toISOString(),
        `key-${code}`,
      ]);
    },
    sql: <R>(text: string) => db.rows<R>(text),
  };
}

/** Declares `name` twice, "(sqlite)" and "(postgresql)", each over a fresh store of that engine. */
export function onBothEngines(name: string, fn: (t: TestContext, store: EngineHalf) => Promise<void>): void {
  for (const [engine, open] of [
    ['sqlite', openSqlite],
    ['postgresql', openPostgres],
  ] as const) {
    void test(`${name} (${engine})`, async (t) => fn(t, await open(t)));
  }
}
