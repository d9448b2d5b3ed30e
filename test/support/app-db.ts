/**
 * SQL straight on the store an app of the tests runs on (its SQLite file, or its PostgreSQL database under
 * TEST_DATABASE=postgres), over a connection of the test's own, as another process would have it: for a
 * test's own checks of what no repository reads, and for faults a test forces inside the app's
 * transactions. Write SQL both engines take, with `?` placeholders.
 */
import type { TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { openPgPool } from '../../core/store/pg/pool.ts';
import { onCleanup, type TestApp } from '../helpers.ts';
import type { Engine } from './engines.ts';

export interface AppDb {
  engine: Engine;
  /** The rows of a query. */
  rows<R>(sql: string, values?: readonly unknown[]): Promise<R[]>;
  /** Runs one statement. */
  run(sql: string, values?: readonly unknown[]): Promise<void>;
  /**
   * Makes every insert into `table` whose `column` is `value` fail with `message`, inside the transaction
   * that makes it (a trigger), until the returned function removes it.
   */
  failInserts(table: string, column: string, value: string, message: string): Promise<() => Promise<void>>;
}

/** `?` placeholders as PostgreSQL's `$1`, `$2`, ... (the tests' SQL has no `?` in its literals). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${(n += 1)}`);
}

function sqliteDb(t: TestContext, file: string): AppDb {
  const db = new Database(file);
  onCleanup(t, () => db.close());
  return {
    engine: 'sqlite',
    rows: <R>(sql: string, values: readonly unknown[] = []) =>
      Promise.resolve(db.prepare<unknown[], R>(sql).all(...values)),
    run: (sql, values = []) => {
      db.prepare(sql).run(...values);
      return Promise.resolve();
    },
    failInserts: (table, column, value, message) => {
      const name = `fail_${table}_${column}`;
      db.exec(`CREATE TRIGGER ${name} BEFORE INSERT ON ${table} WHEN NEW.${column} = '${value}'
               BEGIN SELECT RAISE(ABORT, '${message}'); END`);
      return Promise.resolve(() => {
        db.exec(`DROP TRIGGER ${name}`);
        return Promise.resolve();
      });
    },
  };
}

function postgresDb(t: TestContext, url: string): AppDb {
  // The store's own value parsers: counts and sen as numbers, instants as ISO strings, as SQLite gives them.
  const db = openPgPool(url, { max: 1 });
  onCleanup(t, () => db.close());
  return {
    engine: 'postgresql',
    rows: <R>(sql: string, values: readonly unknown[] = []) => db.rows<R>(numbered(sql), values),
    run: async (sql, values = []) => {
      await db.run(numbered(sql), values);
    },
    failInserts: async (table, column, value, message) => {
      const name = `fail_${table}_${column}`;
      await db.run(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN RAISE EXCEPTION '${message}'; END $$`);
      await db.run(`CREATE TRIGGER ${name} BEFORE INSERT ON ${table} FOR EACH ROW
                    WHEN (NEW.${column} = '${value}') EXECUTE FUNCTION ${name}()`);
      return async () => {
        await db.run(`DROP TRIGGER ${name} ON ${table}`);
        await db.run(`DROP FUNCTION ${name}()`);
      };
    },
  };
}

/** A connection of the test's own to `app`'s store, closed when `t` ends. */
export function appDb(t: TestContext, app: TestApp): AppDb {
  const { databaseUrl, databaseFile } = app.deps.config;
  return databaseUrl !== undefined ? postgresDb(t, databaseUrl) : sqliteDb(t, databaseFile);
}
