import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { LOCK_WAIT_MS } from '../outage.ts';
import { StoreMovedError, movedMark } from './moved-mark.ts';

export type Db = Database.Database;

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Opens the SQLite file with the durability the webhook promises: WAL and synchronous=FULL, so a
 * committed batch survives a power cut. Applies pending migrations. Refuses a store moved to PostgreSQL.
 */
export function openDatabase(file: string): Db {
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  // Another process (the CLI, a worker) may hold the write lock briefly: wait rather than fail, as long as
  // PostgreSQL waits for a lock (decision 225).
  db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
  // A store moved to PostgreSQL is not opened: a process started on it would write what no one reads.
  const mark = movedMark(db);
  if (mark) {
    db.close();
    throw new StoreMovedError(file, mark);
  }
  migrate(db);
  return db;
}

function migrate(db: Db): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name TEXT PRIMARY KEY, applied_at TEXT NOT NULL) STRICT`);
  const applied = new Set(
    db
      .prepare<[], { name: string }>('SELECT name FROM schema_migrations')
      .all()
      .map((row) => row.name),
  );
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{3}_.+\.sql$/.test(f))
    .sort();
  for (const file of files) {
    if (applied.has(file)) continue;
    const sql = readFileSync(path.join(MIGRATIONS_DIR, file), 'utf8');
    // A migration that rebuilds a referenced table (SQLite's way to change a constraint) runs with foreign
    // keys off, as SQLite's ALTER TABLE documentation prescribes, and checks them before it commits.
    const rebuilds = sql.startsWith('-- pragma: foreign_keys=off');
    if (rebuilds) db.pragma('foreign_keys = OFF');
    try {
      db.transaction(() => {
        // Another process may have applied it since we looked; the write lock makes this check final.
        if (db.prepare('SELECT 1 FROM schema_migrations WHERE name = ?').get(file)) return;
        db.exec(sql);
        if (rebuilds && (db.pragma('foreign_key_check') as unknown[]).length > 0) {
          throw new Error(`migration ${file} left rows whose foreign keys do not match`);
        }
        db.prepare('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)').run(
          file,
          new Date().toISOString(),
        );
      }).immediate();
    } finally {
      if (rebuilds) db.pragma('foreign_keys = ON');
    }
  }
}
