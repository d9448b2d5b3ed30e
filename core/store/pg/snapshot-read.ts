/**
 * Reads from one snapshot of the database: a REPEATABLE READ, READ ONLY transaction (PostgreSQL's way to
 * see one committed state for many statements), either run to completion or streamed through a cursor.
 */
import Cursor from 'pg-cursor';
import { checkOut, pgTypes, type PgDb, type PgTx } from './pool.ts';
import { encodeParams } from './text.ts';

/** Runs `fn` in one read-only snapshot of the database. */
export function inSnapshot<T>(db: PgDb, fn: (tx: PgTx) => Promise<T>): Promise<T> {
  return db.transaction(fn, { isolation: 'repeatable read', readOnly: true });
}

/**
 * The rows of one query, `batch` at a time through a cursor, in one read-only snapshot held on one
 * connection until the last row is read or the caller stops (memory stays flat, the order is the query's).
 */
export async function* streamRows<R>(
  db: PgDb,
  text: string,
  values: readonly unknown[],
  batch: number,
): AsyncGenerator<R> {
  const { client, release } = await checkOut(db.pool);
  let open = false;
  let broken = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    open = true;
    const cursor = client.query(new Cursor<R>(text, encodeParams(values), { types: pgTypes }));
    let readFailed = false;
    try {
      for (;;) {
        const rows = await cursor.read(batch).catch((err: unknown) => {
          readFailed = true;
          throw err;
        });
        if (rows.length === 0) break;
        yield* rows;
      }
    } finally {
      // A cursor whose read failed is not closed: on a session the server ended, the close would wait for
      // an answer for ever. The ROLLBACK below ends it on a live session; a lost one is closed instead.
      if (!readFailed) await cursor.close();
    }
  } finally {
    // Also when the caller stopped early or a read failed: the transaction ends before the connection
    // goes back to the pool (a read-only one has nothing to keep), and a connection that cannot end it
    // is not handed back.
    if (open) await client.query('ROLLBACK').catch(() => (broken = true));
    release(broken);
  }
}
