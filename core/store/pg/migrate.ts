/**
 * PostgreSQL migrations: core/store/pg/migrations/NNN_*.sql, applied in name order, each in its own
 * transaction with its row in schema_migrations (as SQLite's). Every process may run this at start-up:
 * a transaction-scoped advisory lock makes ten processes starting at once apply each migration once.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mergeStatus, migrationFiles, type MigrationState } from '../migration-status.ts';
import type { PgDb, Queryable } from './pool.ts';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/** pg_advisory_xact_lock key of amil's migrations (any constant other applications are unlikely to use). */
const MIGRATION_LOCK = 0x616d696c; // 'amil'

/** The migration files of the PostgreSQL store, in the order they apply. */
export function pgMigrationFiles(): string[] {
  return migrationFiles(MIGRATIONS_DIR);
}

/**
 * Strings that every linguistic collation orders otherwise than bytes do: case (`B` before `a` by bytes),
 * punctuation, digits, an accent (`é` after `f` by bytes).
 */
const COLLATION_PROBE = ['a', 'B', '_', '-', '1', 'é', 'f', 'Z'];
const BYTE_ORDER = COLLATION_PROBE.map((s, i) => ({ s, i: i + 1 }))
  .sort((x, y) => Buffer.compare(Buffer.from(x.s), Buffer.from(y.s)))
  .map((x) => x.i)
  .join(',');

/**
 * amil orders text as SQLite does, by bytes: a database with a linguistic collation would reorder reports.
 * `datcollate` alone is not enough: since PostgreSQL 15 a database's default collation may come from ICU
 * (`LOCALE_PROVIDER icu`, some managed services' default) while `datcollate` still says C, so the order
 * the database actually gives is checked too. The provider's columns are read through `to_jsonb`, which
 * names them on every version (PostgreSQL 17 renamed `daticulocale` to `datlocale`).
 */
async function checkCollation(db: PgDb): Promise<void> {
  const row = await db.row<{
    collate: string;
    provider: string | null;
    locale: string | null;
    sorted: string;
  }>(
    `SELECT d.datcollate AS collate, to_jsonb(d) ->> 'datlocprovider' AS provider,
       coalesce(to_jsonb(d) ->> 'datlocale', to_jsonb(d) ->> 'daticulocale') AS locale,
       (SELECT string_agg(p.i::text, ',' ORDER BY p.s) FROM unnest($1::text[]) WITH ORDINALITY AS p (s, i))
         AS sorted
     FROM pg_database d WHERE d.datname = current_database()`,
    [COLLATION_PROBE],
  );
  if (!row) return;
  const byBytes = row.collate === 'C' || row.collate === 'POSIX';
  if (byBytes && row.sorted === BYTE_ORDER) return;
  const how =
    row.provider === 'i'
      ? `ICU's "${row.locale ?? '?'}"`
      : `"${row.provider === 'b' ? row.locale : row.collate}"`;
  throw new Error(
    `the database sorts text by ${how}; amil needs the C collation (bytewise, as SQLite): ` +
      "CREATE DATABASE amil TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER libc LC_COLLATE 'C' LC_CTYPE 'C'",
  );
}

/** The indexes a migration makes only if they do not exist: an operator may have built them beforehand. */
function indexesIfNotExists(sql: string): string[] {
  return [
    ...sql.matchAll(/CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:CONCURRENTLY\s+)?IF\s+NOT\s+EXISTS\s+(\w+)/gi),
  ].map((m) => m[1]!);
}

/**
 * A migration's `CREATE INDEX IF NOT EXISTS` is met by an index of that name even when it is not valid: a
 * `CREATE INDEX CONCURRENTLY` built beforehand (docs/deployment.md) and cancelled or failed leaves one,
 * which PostgreSQL keeps up to date and never reads. The migration would then go on (019 drops the index
 * it replaces) and leave its table without a usable index, so it is refused, naming the fix.
 */
async function refuseInvalidIndexes(tx: Queryable, file: string, sql: string): Promise<void> {
  const names = indexesIfNotExists(sql);
  if (names.length === 0) return;
  const invalid = await tx.rows<{ name: string }>(
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY ($1::text[]) AND NOT i.indisvalid
     ORDER BY 1`,
    [names],
  );
  if (invalid.length === 0) return;
  const list = invalid.map((r) => r.name).join(', ');
  throw new Error(
    `${file} was not applied: index ${list} exists but is not valid (a CREATE INDEX CONCURRENTLY that ` +
      `was cancelled or failed). Drop it (DROP INDEX CONCURRENTLY ${invalid[0]!.name}), then build it again ` +
      'as docs/deployment.md says, or run amil db migrate to build it (writes to its table wait meanwhile).',
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
      await refuseInvalidIndexes(tx, file, sql);
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
