/**
 * Whether a store error says the database could not take the request just now, rather than that the
 * request or the code is wrong: a client should send it again a little later, and is told so (503 with
 * Retry-After) instead of an internal error. Read from the errors' codes only, so this file needs neither
 * driver.
 */

/** SQLite: another process held the write lock past the busy timeout; the disk is full. */
const SQLITE_OUTAGES = ['SQLITE_BUSY', 'SQLITE_FULL'];

/**
 * PostgreSQL (SQLSTATE): class 08 connection exception; class 53 insufficient resources (disk full, out of
 * memory, too many connections); the server shutting down or starting up (57P01 to 57P03); a database
 * not accepting connections (55000 is wider than that, so it is not here).
 */
const PG_OUTAGE_CLASSES = ['08', '53'];
const PG_OUTAGES = new Set(['57P01', '57P02', '57P03']);

/** The socket to PostgreSQL could not be opened, or broke. */
const SOCKET_OUTAGES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);

export function isStoreOutage(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  if (SQLITE_OUTAGES.some((prefix) => code.startsWith(prefix))) return true;
  if (/^[0-9A-Z]{5}$/.test(code)) return PG_OUTAGE_CLASSES.includes(code.slice(0, 2)) || PG_OUTAGES.has(code);
  return SOCKET_OUTAGES.has(code);
}
