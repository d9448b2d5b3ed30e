/**
 * Runs a test on both store engines: SQLite in a temporary file, and PostgreSQL in a database of its own
 * on one server per test file (started with the first PostgreSQL test, stopped after the file's last).
 * The same assertions hold on both: that is the contract of the repository interfaces.
 */
import { test, type TestContext } from 'node:test';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openStore, type Store } from '../../core/store/index.ts';
import { openPgStore } from '../../core/store/pg/index.ts';
import { openPgPool } from '../../core/store/pg/pool.ts';
import { onCleanup, tempDir } from '../helpers.ts';
import { freshTestDatabase } from './test-database.ts';

export type Engine = 'sqlite' | 'postgresql';

/** The whole store a test gets, the same interfaces on either engine. */
export interface EngineStore extends Store {
  engine: Engine;
  /** Adds an agency (orders refer to one). */
  addAgency(code: string): Promise<void>;
  /** Runs SQL straight on the engine, for what no repository reads (a test's own check). */
  sql<R>(text: string): Promise<R[]>;
  /** Runs a writing statement straight on the engine, as an operator's SQL session would (foreign keys on). */
  write(text: string): Promise<void>;
}

const addAgency = (store: Store) => async (code: string) => {
  await store.agencies.create({ code, name: `Agency ${code}`, apiKey: `key-${code}`, now: new Date() });
};

function openSqlite(t: TestContext): Promise<EngineStore> {
  const file = path.join(tempDir(t), 'amil.db');
  const store = openStore(file);
  const raw = new Database(file, { readonly: true });
  let writer: Database.Database | undefined;
  onCleanup(t, async () => {
    raw.close();
    writer?.close();
    await store.close();
  });
  return Promise.resolve({
    ...store,
    engine: 'sqlite',
    addAgency: addAgency(store),
    sql: <R>(text: string) => Promise.resolve(raw.prepare<[], R>(text).all()),
    write: (text: string) =>
      new Promise<void>((resolve) => {
        if (writer === undefined) {
          writer = new Database(file);
          writer.pragma('foreign_keys = ON');
        }
        writer.exec(text); // a throw here rejects the promise
        resolve();
      }),
  });
}

async function openPostgres(t: TestContext): Promise<EngineStore> {
  const url = await freshTestDatabase();
  // The real PostgreSQL store (it migrates on open), and a connection of the test's own for raw reads.
  const store = openPgStore(url);
  const raw = openPgPool(url, { max: 1 });
  onCleanup(t, async () => {
    await raw.close();
    await store.close();
  });
  await store.ping();
  return {
    ...store,
    engine: 'postgresql',
    addAgency: addAgency(store),
    sql: <R>(text: string) => raw.rows<R>(text),
    write: async (text: string) => {
      await raw.run(text);
    },
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

/** As {@link forEachEngine}, with the store opened before `fn` runs. */
export function onBothEngines(name: string, fn: (t: TestContext, store: EngineStore) => Promise<void>): void {
  forEachEngine(name, async (t, open) => fn(t, await open()));
}

/** One test over a fresh SQLite store, for what only SQLite has (a plan it must choose, its own tables). */
export function onSqlite(name: string, fn: (t: TestContext, store: EngineStore) => Promise<void>): void {
  void test(name, async (t) => fn(t, await openSqlite(t)));
}

/** One test over a fresh PostgreSQL store, for what only PostgreSQL has (its own tables, its upkeep). */
export function onPostgres(name: string, fn: (t: TestContext, store: EngineStore) => Promise<void>): void {
  void test(name, async (t) => fn(t, await openPostgres(t)));
}
