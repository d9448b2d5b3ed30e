/**
 * Reads from one snapshot of the database: a REPEATABLE READ, READ ONLY transaction (PostgreSQL's way to
 * see one committed state for many statements). What a client reads at its own pace is streamed by keyset
 * instead (../keyset.ts): a snapshot held open for a client that stops reading would hold its connection.
 */
import type { PgDb, PgTx } from './pool.ts';

/** Runs `fn` in one read-only snapshot of the database. */
export function inSnapshot<T>(db: PgDb, fn: (tx: PgTx) => Promise<T>): Promise<T> {
  return db.transaction(fn, { isolation: 'repeatable read', readOnly: true });
}
