/**
 * PostgreSQL migrations: core/store/pg/migrations/NNN_*.sql, applied in name order, each in its own
 * transaction with its row in schema_migrations (as SQLite's). Every process may run this at start-up:
 * a transaction-scoped advisory lock makes ten processes starting at once apply each migration once.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mergeStatus, migrationFiles, type MigrationState } from '../migration-status.ts';
import type { PgDb } from './pool.ts';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/** pg_advisory_xact_lock key of amil's migrations (any constant other applications are unlikely to use). */
const MIGRATION_LOCK = 0x616d696c; // 'amil'

/** The migration files of the PostgreSQL store, in the order they apply. */
export function pgMigrationFiles(): string[] {
  return migrationFiles(MIGRATIONS_DIR);
}

/** amil orders text as SQLite does, by bytes: a database with a linguistic collation would reorder reports. */
async function checkCollation(db: PgDb): Promise<void> {
  const row = await db.row<{ collate: string }>(
    'SELECT datcollate AS collate FROM pg_database WHERE datname = current_database()',
  );
  if (row && row.collate !== 'C' && row.collate !== 'POSIX')
    throw new Error(
      `the database sorts text by "${row.collate}"; amil needs the C collation (bytewise, as SQLite): ` +
        "CREATE DATABASE amil TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'",
    );
}

/** Applies the pending migrations; returns the names it applied (none when another process did). */
export async function migratePg(db: PgDb): Promise<string[]> {
  await checkCollation(db);
  const applied: string[] = [];
  for (const file of pgMigrationFiles()) {
    const sql = readFileSync(path.join(MIGRATIONS_DIR, file), 'utf8');
    const ran = await db.transaction(async (tx) => {
      // Another process applying this migration, or a table's lock a migration asks for, is waited for as
      // long as it takes: the pool's lock wait (decision 225) is for requests, not for start-up.
      await tx.run('SET LOCAL lock_timeout = 0');
      // Held until this transaction ends: whoever waited here sees the row the holder committed.
      await tx.run('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await tx.run(`CREATE TABLE IF NOT EXISTS schema_migrations (
        name text PRIMARY KEY, applied_at timestamptz NOT NULL)`);
      if (await tx.row('SELECT 1 FROM schema_migrations WHERE name = $1', [file])) return false;
      await tx.run(sql);
      await tx.run('INSERT INTO schema_migrations (name, applied_at) VALUES ($1, $2)', [
        file,
        new Date().toISOString(),
      ]);
      return true;
    });
    if (ran) applied.push(file);
  }
  return applied;
}

/** Every migration file with when it was applied, plus any applied that this version does not have. */
export async function pgMigrationStatus(db: PgDb): Promise<MigrationState[]> {
  const exists = await db.row<{ table: string | null }>(
    "SELECT to_regclass('schema_migrations')::text AS table",
  );
  const rows = exists?.table
    ? await db.rows<{ name: string; appliedAt: string }>(
        'SELECT name, applied_at AS "appliedAt" FROM schema_migrations ORDER BY name',
      )
    : [];
  return mergeStatus(pgMigrationFiles(), rows);
}
