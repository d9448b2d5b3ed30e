/**
 * Whether a store error says the database could not take the request just now, rather than that the
 * request or the code is wrong: a client should send it again a little later, and is told so (503 with
 * Retry-After) instead of an internal error. Read from the errors' codes (and a moved SQLite store's
 * message), so this file needs neither driver.
 */

/**
 * How long a write waits for a lock another session or process holds, on either engine (SQLite's busy
 * timeout, PostgreSQL's lock_timeout), before the store gives up on it as busy (decision 225).
 */
export const LOCK_WAIT_MS = 5000;

/**
 * The code of a connection to the database that could not be had within its timeout (every connection
 * busy, or a server that takes the connection and never answers): the drivers give those no code.
 */
export const STORE_UNREACHABLE = 'STORE_UNREACHABLE';

/**
 * The code of a statement whose connection to the database ended under it (the server crashed, restarted or
 * failed over): the drivers give that no code either. A COMMIT lost so may have committed: every write that
 * answers it is one a client may send again (unique keys make the second one a no-op).
 */
export const STORE_CONNECTION_LOST = 'STORE_CONNECTION_LOST';

/** SQLite: another process held the write lock past the busy timeout; the disk is full. */
const SQLITE_OUTAGES = ['SQLITE_BUSY', 'SQLITE_FULL'];

/**
 * How the refusal of a SQLite store moved to PostgreSQL begins (sqlite/moved-mark.ts, decision 258): a
 * server left running on the old file cannot write, and its clients are told to send again later, by when
 * the deployment answers from PostgreSQL.
 */
export const STORE_MOVED_MESSAGE = 'this store was moved to PostgreSQL';

/**
 * PostgreSQL (SQLSTATE): class 08 connection exception; class 53 insufficient resources (disk full, out of
 * memory, too many connections); the server shutting down or starting up (57P01 to 57P03); a lock not had
 * within lock_timeout (55P03, the twin of SQLITE_BUSY); a server taking no writes (25006: a standby, or a
 * primary demoted by a failover). A database not accepting connections (55000) is not here: that code is
 * wider than that.
 */
const PG_OUTAGE_CLASSES = ['08', '53'];
const PG_OUTAGES = new Set(['57P01', '57P02', '57P03', '55P03', '25006']);

/**
 * The socket to PostgreSQL could not be opened, or broke; no connection came in time, or one was lost; or
 * its host name could not be looked up just now (EAI_AGAIN: a DNS answer that may come; a name that does
 * not exist, ENOTFOUND, is a setting to correct, not an outage).
 */
const SOCKET_OUTAGES = new Set([
  'ECONNREFUSED',
  'EAI_AGAIN',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  STORE_UNREACHABLE,
  STORE_CONNECTION_LOST,
]);

export function isStoreOutage(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  if (SQLITE_OUTAGES.some((prefix) => code.startsWith(prefix))) return true;
  if (code === 'SQLITE_CONSTRAINT_TRIGGER')
    return String((err as { message?: unknown }).message).startsWith(STORE_MOVED_MESSAGE);
  if (/^[0-9A-Z]{5}$/.test(code)) return PG_OUTAGE_CLASSES.includes(code.slice(0, 2)) || PG_OUTAGES.has(code);
  return SOCKET_OUTAGES.has(code);
}
