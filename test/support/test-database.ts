/**
 * The engine the app-level tests run on: SQLite files in temp dirs, or with TEST_DATABASE=postgres (npm run
 * test:pg) PostgreSQL: one server per test process (started by the first app that needs it, stopped after
 * the file's last test) and a fresh database per app, so apps of one file never see each other's rows.
 * The store tests on both engines (engines.ts, pg-stores.ts) take their databases from the same server.
 */
import { after } from 'node:test';
import { startPostgres, type TestPostgres } from './postgres.ts';

/** True when the suite was asked to run on PostgreSQL. */
export const onPostgres = process.env.TEST_DATABASE === 'postgres';

let server: Promise<TestPostgres> | undefined;
// A root-level hook of this file's test run: the server, if one was started, stops after the last test.
after(async () => {
  if (server) await (await server).stop();
});

/**
 * What an app's env adds to stay on SQLite in either run (an empty DATABASE_URL is unset): for a test whose
 * subject is the SQLite store itself, as the source of a move to PostgreSQL.
 */
export const SQLITE_APP = { DATABASE_URL: '' } as const;

/** A new empty database on this test process's PostgreSQL; its DATABASE_URL. */
export async function freshTestDatabase(): Promise<string> {
  server ??= startPostgres();
  return (await server).createTestDatabase();
}

/** The environment that puts an app on the engine of this run: DATABASE_URL on PostgreSQL, nothing on SQLite. */
export async function testDatabaseEnv(): Promise<Record<string, string>> {
  return onPostgres ? { DATABASE_URL: await freshTestDatabase() } : {};
}
