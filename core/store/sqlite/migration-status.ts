/** SQLite's migrations and which the file has applied, read without applying anything (`amil db status`). */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { mergeStatus, migrationFiles, type MigrationState } from '../migration-status.ts';

const SQLITE_MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

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
