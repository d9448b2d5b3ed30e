/**
 * The mark `amil migrate-store` leaves on a SQLite store it moved to PostgreSQL (decision 258): a row saying
 * where and when, and a trigger on every table that refuses any write. A server left running on the old
 * file (step 1 of the move forgotten) then answers its writes 503 instead of accepting postings and payments
 * that PostgreSQL will never see, and a process started on the file refuses to start. Reads still work: the
 * file stays what it was when it was copied, for verification and for going back (`--reopen` lifts the mark).
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { STORE_MOVED_MESSAGE } from '../outage.ts';

/** The table holding the mark; not copied by a move. */
export const MOVED_TABLE = 'store_moved';
/** Every trigger of the mark starts with this, so lifting it finds them all. */
const TRIGGER_PREFIX = 'store_moved_refuses_';

export interface MovedMark {
  /** The PostgreSQL database it was moved to, password redacted. */
  target: string;
  at: string;
}

type Db = Database.Database;

const quoted = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** The mark on the store, if it was moved. */
export function movedMark(db: Db): MovedMark | undefined {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(MOVED_TABLE);
  if (!table) return undefined;
  return db.prepare<[], MovedMark>(`SELECT target, at FROM ${MOVED_TABLE}`).get();
}

/** The mark on the SQLite file at `file`, read without writing (`amil db status`); none when it is missing. */
export function movedMarkOf(file: string): MovedMark | undefined {
  if (!existsSync(file)) return undefined;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return movedMark(db);
  } finally {
    db.close();
  }
}

/** A process started on a moved store: what the operator must change (printed without a stack trace). */
export class StoreMovedError extends Error {
  constructor(file: string, mark: MovedMark) {
    super(
      `${file}: ${STORE_MOVED_MESSAGE} (${mark.target}) at ${mark.at} by amil migrate-store. Set DATABASE_URL ` +
        `to use it; to write this file again instead: amil migrate-store --reopen --from sqlite:${file}`,
    );
    this.name = 'StoreMovedError';
  }
}

/** Lifts the mark: the triggers and the row. Run in the caller's transaction. */
export function liftMovedMark(db: Db): boolean {
  const triggers = db
    .prepare<[string], { name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE ?",
    )
    .all(`${TRIGGER_PREFIX}%`);
  for (const { name } of triggers) db.exec(`DROP TRIGGER ${name}`);
  const marked = movedMark(db) !== undefined;
  db.exec(`DROP TABLE IF EXISTS ${MOVED_TABLE}`);
  return marked || triggers.length > 0;
}

/**
 * Marks the store moved to `target` at `at` (a mark already there is replaced): every table, the mark's own
 * included, refuses inserts, updates and deletes from then on. Run in the caller's transaction.
 */
export function markMoved(db: Db, mark: MovedMark): void {
  liftMovedMark(db);
  db.exec(`CREATE TABLE ${MOVED_TABLE} (target TEXT NOT NULL, at TEXT NOT NULL) STRICT`);
  db.prepare(`INSERT INTO ${MOVED_TABLE} (target, at) VALUES (?, ?)`).run(mark.target, mark.at);
  const tables = db
    .prepare<[], { name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all();
  const refusal = quoted(`${STORE_MOVED_MESSAGE} (${mark.target}) at ${mark.at} by amil migrate-store`);
  for (const { name } of tables)
    for (const op of ['INSERT', 'UPDATE', 'DELETE'])
      db.exec(
        `CREATE TRIGGER ${TRIGGER_PREFIX}${op.toLowerCase()}_${name} BEFORE ${op} ON ${name}
         BEGIN SELECT RAISE(ABORT, ${refusal}); END`,
      );
}
