/**
 * The body of a dashboard-read thread (piscina): the merchant dashboard's reads on a connection of the
 * thread's own to the SQLite file, off the web process's event loop (decision 244). better-sqlite3 runs a
 * statement on the thread that calls it, so a read over a year of postings (a filter no index answers, a
 * deep page) held the event loop, and every other request of the process waited for it; here it holds only
 * this thread. An error comes back as a value with its code (an error's own properties do not survive the
 * thread boundary): the request thread throws it again, so a busy database is still a 503.
 */
import { workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { LOCK_WAIT_MS } from '../outage.ts';
import { sqliteDashboardReads, type SqliteDashboardReads } from './dashboard-reads.ts';

/** Every read; the exports' stream as its chunks (an async generator cannot cross the thread boundary). */
export type ThreadRead = Exclude<keyof SqliteDashboardReads, 'paymentRows'>;

export interface ReadTask {
  method: ThreadRead;
  args: unknown[];
}

export type ReadResult =
  { ok: true; value: unknown } | { ok: false; message: string; code: string | undefined };

const { file } = workerData as { file: string };
let reads: SqliteDashboardReads | undefined;

/** The reads over this thread's connection, opened on the first task (the web process migrated the file). */
function readsOf(): SqliteDashboardReads {
  if (!reads) {
    const db = new Database(file, { fileMustExist: true });
    // Reads only: a write through this connection would be a bug, and SQLite refuses it.
    db.pragma('query_only = ON');
    db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
    reads = sqliteDashboardReads(db);
  }
  return reads;
}

/** Runs one read; its error is returned, with its code. */
export default async function read(task: ReadTask): Promise<ReadResult> {
  try {
    const repository = readsOf() as unknown as Record<ThreadRead, (...args: unknown[]) => Promise<unknown>>;
    return { ok: true, value: await repository[task.method](...task.args) };
  } catch (err) {
    const { message, code } = (err ?? {}) as { message?: unknown; code?: unknown };
    return { ok: false, message: String(message ?? err), code: typeof code === 'string' ? code : undefined };
  }
}
