/**
 * Which migrations a database has applied, for `amil db status` and `amil db migrate` on either engine.
 * SQLite's are read without applying anything: the file is opened read-only, or not at all when missing.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const SQLITE_MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sqlite', 'migrations');

/** One migration and when it was applied (undefined: pending). */
export interface MigrationState {
  name: string;
  appliedAt: string | undefined;
}

/** The NNN_name.sql files of a migrations directory, in the order they apply. */
export function migrationFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_.+\.sql$/.test(f))
    .sort();
}

/** Files and applied rows side by side, by name; a row with no file (applied by a newer amil) is listed too. */
export function mergeStatus(
  files: readonly string[],
  rows: readonly { name: string; appliedAt: string }[],
): MigrationState[] {
  const appliedAt = new Map(rows.map((r) => [r.name, r.appliedAt]));
  const names = [...new Set([...files, ...appliedAt.keys()])].sort();
  return names.map((name) => ({ name, appliedAt: appliedAt.get(name) }));
}

/** The SQLite migrations and which of them the file at `file` has applied (all pending if it is missing). */
export function sqliteMigrationStatus(file: string): MigrationState[] {
  const files = migrationFiles(SQLITE_MIGRATIONS_DIR);
  if (!existsSync(file)) return mergeStatus(files, []);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const table = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
      .get();
    const rows = table
      ? db
          .prepare<[], { name: string; appliedAt: string }>(
            'SELECT name, applied_at AS appliedAt FROM schema_migrations ORDER BY name',
          )
          .all()
      : [];
    return mergeStatus(files, rows);
  } finally {
    db.close();
  }
}
