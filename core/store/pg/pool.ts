/**
 * The PostgreSQL connection of a process (node-postgres): one pool from DATABASE_URL, statements prepared
 * once per connection by name, transactions that retry serialization failures, and values read back in the
 * shapes the SQLite store returns (integer sen as numbers, instants as `toISOString()` strings).
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import Cursor from 'pg-cursor';
import { finished } from 'node:stream/promises';
import { copyText, decodeText, encodeParams } from './text.ts';
import { LOCK_WAIT_MS, STORE_CONNECTION_LOST, STORE_UNREACHABLE } from '../outage.ts';

/**
 * How long a statement waits for a connection: one of the pool's to come free, or a new one to log in. Past
 * it the statement fails as an outage (503 with Retry-After) instead of queueing for ever behind a
 * database that has stopped answering (decision 225).
 */
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * How long PostgreSQL lets a session of amil sit inside a transaction with no statement to run (decision
 * 263). amil's transactions run their statements back to back, and the longest, a reconciliation's
 * snapshot, waits only for its own workbook between reads: a session idle this long belongs to a process
 * that is frozen (a paused VM, SIGSTOP). Ending it frees the rows it locked, which other machines' requests
 * for the same keys would otherwise wait on, 503 after 503, for as long as it stays frozen.
 */
export const IDLE_TRANSACTION_MS = 60_000;

/** Integer, timestamp and text OIDs (pg_type) whose text form we parse ourselves. */
const OID = {
  int8: 20,
  numeric: 1700,
  date: 1082,
  timestamptz: 1184,
  timestamp: 1114,
  text: 25,
  varchar: 1043,
} as const;

/** int8 (bigint: sen, ids, counts) as a number; a value a double cannot hold exactly is an error, never rounded. */
export function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value))
    throw new RangeError(`integer ${text} from PostgreSQL is beyond Number.MAX_SAFE_INTEGER`);
  return value;
}

/** numeric (what sum() of a bigint returns) as a number, under the same rule when it is an integer. */
function parseNumeric(text: string): number {
  return /^-?\d+$/.test(text) ? parseInt8(text) : Number(text);
}

const defaultTimestamptz = pg.types.getTypeParser(OID.timestamptz, 'text') as (text: string) => Date;

let lastTimestamptz = { text: '', iso: '' };

/**
 * timestamptz as the exact string SQLite holds: `new Date(...).toISOString()`, UTC, milliseconds. The last
 * answer is kept: the rows of one result often share an instant (a batch's versions were received at one),
 * and parsing it afresh for each was a twentieth of the normalise job.
 */
function parseTimestamptz(text: string): string {
  if (text !== lastTimestamptz.text) lastTimestamptz = { text, iso: defaultTimestamptz(text).toISOString() };
  return lastTimestamptz.iso;
}

/** The value parsers of amil's pools (per pool, so another pg user in the process keeps its own). */
export const pgTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): ((value: string) => unknown) => {
    if (format === 'binary') return pg.types.getTypeParser(oid, 'binary') as (value: string) => unknown;
    switch (oid) {
      case OID.int8:
        return parseInt8;
      case OID.numeric:
        return parseNumeric;
      case OID.timestamptz:
        return parseTimestamptz;
      // Business dates are text columns; a computed date stays its 'YYYY-MM-DD' text, never a local Date.
      case OID.date:
      case OID.timestamp:
        return (text: string) => text;
      // Text comes back as it was written, NUL included (text.ts).
      case OID.text:
      case OID.varchar:
        return decodeText;
      default:
        return pg.types.getTypeParser(oid, 'text') as (value: string) => unknown;
    }
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** A statement prepared once per connection under a name derived from its text. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/**
 * Names a statement after its text, so the same text is prepared once per connection and two texts never
 * share a name (node-postgres refuses a name reused with another text).
 */
export function statement(text: string): Statement {
  return { name: `amil_${createHash('sha256').update(text).digest('hex').slice(0, 20)}`, text };
}

/** What runs queries: the pool (each query on any connection) or one transaction's connection. */
export interface Queryable {
  /** The rows of a statement (prepared by name) or of plain text. */
  rows<R>(sql: Statement | string, values?: readonly unknown[]): Promise<R[]>;
  /** The first row, or undefined. */
  row<R>(sql: Statement | string, values?: readonly unknown[]): Promise<R | undefined>;
  /** Runs a statement; the number of rows it touched. */
  run(sql: Statement | string, values?: readonly unknown[]): Promise<number>;
  /**
   * Inserts rows with `COPY table (columns) FROM STDIN`: for the server a fraction of the work of an
   * INSERT of the same rows (decision 221), but all or nothing and without ON CONFLICT: a row that breaks
   * a unique key fails the whole copy. The number of rows copied.
   */
  copyRows(table: string, columns: readonly string[], rows: readonly (readonly unknown[])[]): Promise<number>;
  /**
   * Calls `fn` once what was written so far is committed: at once on the pool (each statement commits on
   * its own), after COMMIT in a transaction (never when it rolls back).
   */
  afterCommit(fn: () => void): void;
}

/** One transaction's connection; it can also stream a large result in pieces. */
export interface PgTx extends Queryable {
  /** The rows of a query, `batch` at a time, through a cursor (memory stays flat). */
  cursor<R>(text: string, values: readonly unknown[], batch: number): AsyncIterable<R[]>;
}

export type Isolation = 'read committed' | 'repeatable read' | 'serializable';

export interface TransactionOptions {
  isolation?: Isolation;
  readOnly?: boolean;
  /** Attempts in all when PostgreSQL reports a serialization failure or a deadlock (default 5). */
  attempts?: number;
}

export interface PgDb extends Queryable {
  readonly pool: pg.Pool;
  /**
   * Runs `fn` in one transaction and commits; rolls back on any error. A serialization failure or deadlock
   * (at any statement or the commit) runs `fn` again from the start, so `fn` must do nothing but queries
   * before it returns.
   */
  transaction<T>(fn: (tx: PgTx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  close(): Promise<void>;
}

export interface PgPoolOptions {
  /** Most connections of this process (default 10). */
  max?: number;
  /** Told every error of an idle connection (a restarted server): the pool replaces it. */
  onIdleError?: (err: Error) => void;
  /** How long a statement waits for a connection (default CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
  /**
   * How long a session may sit idle inside a transaction before the server ends it (default
   * IDLE_TRANSACTION_MS; decision 263).
   */
  idleTransactionMs?: number | undefined;
}

/** SQLSTATEs after which the same transaction may succeed if run again. */
const RETRYABLE = new Set(['40001', '40P01']);

/** Whether an error is PostgreSQL refusing a row that breaks a unique key (SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.code === '23505';
}

/** Whether an error is a serialization failure or deadlock that a retry may clear. */
export function isRetryable(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.code !== undefined && RETRYABLE.has(err.code);
}

function toConfig(sql: Statement | string, values: readonly unknown[] | undefined): pg.QueryConfig {
  const text = typeof sql === 'string' ? sql : sql.text;
  return {
    text,
    ...(typeof sql !== 'string' && { name: sql.name }),
    ...(values !== undefined && { values: encodeParams(values) }),
  };
}

/**
 * Whether the connection is still usable after `err`: a refusal by the server (an ERROR) is; a FATAL or
 * PANIC one comes as the server ends the session (terminated, shutting down), before the connection
 * itself reports its end, so it must not be handed back meanwhile; nor after anything not from the server.
 */
function sessionSurvives(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.severity !== 'FATAL' && err.severity !== 'PANIC';
}

/** A connection taken from the pool, and how to hand it back. */
export interface CheckedOut {
  client: pg.PoolClient;
  /** Hands it back; one that failed (`broken`, or lost while out) is closed instead. */
  release: (broken?: boolean | Error) => void;
  /**
   * `err` from a statement on this connection, as an outage when the connection was lost under it (the
   * server crashed, restarted or failed over mid-statement): node-postgres gives that no code ('Connection
   * terminated unexpectedly'), so it would read as a fault of amil's (a 500) instead of one to retry (a 503).
   */
  outageIfLost: (err: unknown) => unknown;
}

/**
 * A connection of the pool. node-postgres gives a connection not had in time no code ('timeout exceeded
 * when trying to connect'), nor one the server closed while logging in: those are outages, and say so.
 */
async function connect(pool: pg.Pool): Promise<pg.PoolClient> {
  try {
    return await pool.connect();
  } catch (err) {
    if (typeof (err as { code?: unknown } | null)?.code === 'string') throw err;
    throw Object.assign(new Error(`no connection to PostgreSQL: ${(err as Error).message}`, { cause: err }), {
      code: STORE_UNREACHABLE,
    });
  }
}

/**
 * Takes a connection from the pool, listening for its errors while it is out. node-postgres emits 'error'
 * on a connection whose server went away mid-query (a terminated session, a restart, a failover), and the
 * pool listens only while the connection is idle in it: an 'error' with no listener would kill the
 * process. The query in flight is rejected anyway; the lost connection is closed, never handed back.
 */
export async function checkOut(pool: pg.Pool): Promise<CheckedOut> {
  const client = await connect(pool);
  let lost: Error | undefined;
  const onError = (err: Error) => (lost = err);
  client.on('error', onError);
  return {
    client,
    release: (broken) => {
      // A lost connection keeps the listener: it may still report its end while being closed.
      if (!lost) client.removeListener('error', onError);
      client.release(lost ?? broken);
    },
    outageIfLost: (err) => {
      const coded = typeof (err as { code?: unknown } | null)?.code === 'string';
      if (!lost || coded || err instanceof pg.DatabaseError) return err;
      return Object.assign(
        new Error(`the connection to PostgreSQL was lost: ${(err as Error).message}`, { cause: err }),
        {
          code: STORE_CONNECTION_LOST,
        },
      );
    },
  };
}

/** One statement on a connection of its own (it commits on its own), handed back after it. */
async function onOwnConnection(pool: pg.Pool, config: pg.QueryConfig): Promise<pg.QueryResult> {
  const { client, release, outageIfLost } = await checkOut(pool);
  try {
    const result = await client.query(config);
    release();
    return result;
  } catch (err) {
    release(sessionSurvives(err) ? undefined : (err as Error));
    throw outageIfLost(err);
  }
}

function queryable(client: pg.Pool | pg.PoolClient, afterCommit: (fn: () => void) => void): Queryable {
  const query = (sql: Statement | string, values: readonly unknown[] | undefined) => {
    const config = toConfig(sql, values);
    return client instanceof pg.Pool ? onOwnConnection(client, config) : client.query(config);
  };
  const rows = async <R>(sql: Statement | string, values?: readonly unknown[]): Promise<R[]> =>
    (await query(sql, values)).rows as R[];
  return {
    rows,
    row: async <R>(sql: Statement | string, values?: readonly unknown[]) => (await rows<R>(sql, values))[0],
    run: async (sql, values) => (await query(sql, values)).rowCount ?? 0,
    copyRows: async (table, columns, data) => {
      // Encoded before the COPY starts: a value it refuses then throws before the server waits for data (a
      // COPY started and never ended would hold its connection, and the transaction's ROLLBACK, for ever).
      const text = copyText(data);
      // On the pool the copy takes a connection of its own, and commits on its own like any statement.
      const own = client instanceof pg.Pool ? await checkOut(client) : undefined;
      const connection = own?.client ?? (client as pg.PoolClient);
      try {
        const stream = connection.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
        stream.end(text);
        await finished(stream);
        own?.release();
        return stream.rowCount;
      } catch (err) {
        // A refusal by the server leaves the connection usable; anything else, it is not handed back.
        own?.release(sessionSurvives(err) ? undefined : (err as Error));
        throw own ? own.outageIfLost(err) : err;
      }
    },
    afterCommit,
  };
}

async function* readCursor<R>(
  client: pg.PoolClient,
  text: string,
  values: readonly unknown[],
  batch: number,
): AsyncIterable<R[]> {
  const cursor = client.query(new Cursor<R>(text, encodeParams(values), { types: pgTypes }));
  let readFailed = false;
  try {
    for (;;) {
      const rows = await cursor.read(batch).catch((err: unknown) => {
        readFailed = true;
        throw err;
      });
      if (rows.length === 0) return;
      yield rows;
    }
  } finally {
    // A cursor whose read failed is not closed: on a session the server ended, the close would wait for an
    // answer for ever. The transaction's ROLLBACK ends it on a live session; a lost one is closed instead.
    if (!readFailed) await cursor.close();
  }
}

/**
 * The name this process's connections show in `pg_stat_activity` and the server's log: `amil`, the entry
 * point (server, worker, amil), the process id and the machine. With several machines on one database, the
 * session holding a lock or a long transaction is then found on its machine. PostgreSQL keeps 63 bytes; an
 * `application_name` in DATABASE_URL overrides it.
 */
export function applicationName(): string {
  const entry = path.basename(process.argv[1] ?? 'node').replace(/\.[cm]?[jt]s$/, '');
  // The pid before the host: a long host name (a cloud's internal one) is what the 63 bytes cut.
  return `amil ${entry} ${process.pid} ${hostname()}`.replace(/[^\x20-\x7e]/g, '?').slice(0, 63);
}

/** Opens the pool of `url` (postgres://user:password@host:5432/db); connections are made on first use. */
export function openPgPool(url: string, options: PgPoolOptions = {}): PgDb {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    types: pgTypes,
    application_name: applicationName(),
    connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    // UTC sessions: what a timestamptz prints as, and what date arithmetic in SQL means, never depend on
    // the server's or the role's TimeZone. A lock another session holds is waited for as long as SQLite
    // waits for its write lock, then the statement fails as busy (55P03: an outage, decision 225). No JIT:
    // amil's statements are short, and compiling a report's page cost more than running it (decision 229).
    // A session left idle inside a transaction (its process frozen) is ended by the server (decision 263).
    options:
      `-c TimeZone=UTC -c lock_timeout=${LOCK_WAIT_MS} -c jit=off ` +
      `-c idle_in_transaction_session_timeout=${options.idleTransactionMs ?? IDLE_TRANSACTION_MS}`,
  });
  pool.on('error', (err) => options.onIdleError?.(err));

  const transaction = async <T>(
    fn: (tx: PgTx) => Promise<T>,
    txOptions: TransactionOptions = {},
  ): Promise<T> => {
    const begin = `BEGIN ISOLATION LEVEL ${(txOptions.isolation ?? 'read committed').toUpperCase()}${
      txOptions.readOnly ? ' READ ONLY' : ''
    }`;
    const attempts = txOptions.attempts ?? 5;
    for (let attempt = 1; ; attempt += 1) {
      const { client, release, outageIfLost } = await checkOut(pool);
      let broken = false;
      try {
        await client.query(begin);
        // Asked for by this attempt only: a retried transaction asks again.
        const committed: (() => void)[] = [];
        const tx: PgTx = {
          ...queryable(client, (done) => committed.push(done)),
          cursor: (text, values, batch) => readCursor(client, text, values, batch),
        };
        const result = await fn(tx);
        await client.query('COMMIT');
        for (const done of committed) done();
        return result;
      } catch (err) {
        try {
          await client.query('ROLLBACK');
        } catch {
          // The connection itself failed: it is not handed back to the pool.
          broken = true;
        }
        if (attempt >= attempts || !isRetryable(err)) throw outageIfLost(err);
      } finally {
        release(broken);
      }
      // Jittered, growing pauses: two transactions that collided should not collide again at once.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  };

  return {
    pool,
    ...queryable(pool, (done) => done()),
    transaction,
    close: () => pool.end(),
  };
}

/** The URL with its password hidden, for logs and `amil db status`. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
