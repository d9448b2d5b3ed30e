/**
 * Runs a test on both store engines: SQLite in a temporary file, and PostgreSQL in a database of its own
 * on one server per test file (started with the first PostgreSQL test, stopped after the file's last).
 * The same assertions hold on both: that is the contract of the repository interfaces.
 */
import { after, test, type TestContext } from 'node:test';
import path from 'node:path';
import type { Store } from '../../core/store/index.ts';
import { openDatabase } from '../../core/store/sqlite/db.ts';
import { sqliteAgencies } from '../../core/store/sqlite/agencies.ts';
import { sqliteAnomalies } from '../../core/store/sqlite/anomalies.ts';
import { sqliteBankPostings } from '../../core/store/sqlite/bank-postings.ts';
import { sqliteOutbox } from '../../core/store/sqlite/outbox.ts';
import { sqlitePartners } from '../../core/store/sqlite/partners.ts';
import { sqliteLedger } from '../../core/store/sqlite/ledger.ts';
import { migratePg } from '../../core/store/pg/migrate.ts';
import { openPgPool } from '../../core/store/pg/pool.ts';
import { pgAgencies } from '../../core/store/pg/agencies.ts';
import { pgAnomalies } from '../../core/store/pg/anomalies.ts';
import { pgBankPostings } from '../../core/store/pg/bank-postings.ts';
import { pgLedger } from '../../core/store/pg/ledger.ts';
import { pgOutbox } from '../../core/store/pg/outbox.ts';
import { pgPartners } from '../../core/store/pg/partners.ts';
import { onCleanup, tempDir } from '../helpers.ts';
import { startPostgres, type TestPostgres } from './postgres.ts';

export type Engine = 'sqlite' | 'postgresql';

/** The repositories a test gets, the same interfaces on either engine. */
export interface EngineStore extends Pick<
  Store,
  'partners' | 'agencies' | 'anomalies' | 'bankPostings' | 'outbox' | 'ledger'
> {
  engine: Engine;
  /** Runs SQL straight on the engine, for what no repository reads (a test's own check). */
  sql<R>(text: string): Promise<R[]>;
}

let server: Promise<TestPostgres> | undefined;
after(async () => {
  if (server) await (await server).stop();
});

function openSqlite(t: TestContext): Promise<EngineStore> {
  const db = openDatabase(path.join(tempDir(t), 'amil.db'));
  onCleanup(t, () => db.close());
  return Promise.resolve({
    engine: 'sqlite',
    partners: sqlitePartners(db),
    agencies: sqliteAgencies(db),
    anomalies: sqliteAnomalies(db),
    bankPostings: sqliteBankPostings(db),
    outbox: sqliteOutbox(db),
    ledger: sqliteLedger(db),
    sql: <R>(text: string) => Promise.resolve(db.prepare<[], R>(text).all()),
  });
}

async function openPostgres(t: TestContext): Promise<EngineStore> {
  server ??= startPostgres();
  const url = await (await server).createTestDatabase();
  const db = openPgPool(url);
  onCleanup(t, () => db.close());
  await migratePg(db);
  return {
    engine: 'postgresql',
    partners: pgPartners(db),
    agencies: pgAgencies(db),
    anomalies: pgAnomalies(db),
    bankPostings: pgBankPostings(db),
    outbox: pgOutbox(db),
    ledger: pgLedger(db),
    sql: <R>(text: string) => db.rows<R>(text),
  };
}

/** Declares `name` twice, "(sqlite)" and "(postgresql)", each over a fresh store of that engine. */
export function forEachEngine(
  name: string,
  fn: (t: TestContext, open: () => Promise<EngineStore>) => Promise<void>,
): void {
  for (const [engine, open] of [
    ['sqlite', openSqlite],
    ['postgresql', openPostgres],
  ] as const) {
    void test(`${name} (${engine})`, (t) => fn(t, () => open(t)));
  }
}
