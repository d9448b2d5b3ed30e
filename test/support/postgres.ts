/**
 * A real PostgreSQL 15 server for tests, started the way test/support/redis.ts starts redis-server: Debian's
 * binaries, `initdb` in a temporary directory, a free loopback port, its unix socket in that directory,
 * fsync on (the durability production has). Running as root, the cluster belongs to the `postgres` user:
 * PostgreSQL refuses to run as root.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import pg from 'pg';
import { pgMigrationFiles } from '../../core/store/pg/migrate.ts';
import type { PgDb } from '../../core/store/pg/pool.ts';
import { onCleanup } from '../helpers.ts';
import { freePort } from './free-port.ts';

const BIN = '/usr/lib/postgresql/15/bin';
const PG_MIGRATIONS = path.resolve(import.meta.dirname, '../../core/store/pg/migrations');
/** The superuser of the test cluster (trust authentication on loopback and the socket only). */
const SUPERUSER = 'amil';

export interface TestPostgres {
  /** `postgres://amil@127.0.0.1:<port>/amil`: a database made for this server, empty. */
  url: string;
  /** A new empty database on this server (C collation, as amil requires); its URL. */
  createTestDatabase(): Promise<string>;
  /** The postmaster's pid: SIGSTOP makes a server that takes connections and never answers them. */
  pid: number;
  stop(): Promise<void>;
  /** Stops the server as a crash does (immediate shutdown), keeping its data; `restart()` brings it back. */
  crash(): Promise<void>;
  /** Starts a crashed server again on the same data and port (crash recovery first), as an operator would. */
  restart(): Promise<void>;
  /**
   * Makes every session, the open ones too, refuse writes from its next statement, as a standby or a demoted
   * primary does (`false`), or take them again (`true`).
   */
  takeWrites(on: boolean): Promise<void>;
}

/** The uid and gid to run PostgreSQL as: ours, or the `postgres` user's when we are root. */
function owner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

let databases = 0;

/**
 * Starts a fresh PostgreSQL cluster; stopped and removed when the test `t` ends (or by `stop()`). One per
 * test file is the intended cost (about a second); `createTestDatabase()` isolates the tests inside it.
 */
export async function startPostgres(t?: TestContext): Promise<TestPostgres> {
  const dir = mkdtempSync(path.join(tmpdir(), 'amil-pg-'));
  const data = path.join(dir, 'data');
  const user = owner();
  if (user) chownSync(dir, user.uid, user.gid);
  const asOwner = user ? { uid: user.uid, gid: user.gid } : {};
  // C collation and UTF-8: text sorts by bytes, as SQLite sorts it (the workbooks' order depends on it).
  // --no-sync: the new cluster's files need not reach the disk before the server starts (a temporary
  // directory no machine restart will see); the server itself runs with fsync on.
  execFileSync(
    path.join(BIN, 'initdb'),
    [
      '-D',
      data,
      '-U',
      SUPERUSER,
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C',
      '--no-instructions',
      '--no-sync',
    ],
    { ...asOwner, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
  );
  const port = await freePort();
  let child: ChildProcess | undefined;
  // A test process that dies without its cleanup must not leave a server behind.
  const onExit = () => child?.kill('SIGQUIT');
  process.once('exit', onExit);
  /** Starts the postmaster on the cluster's directory and port; resolves once it takes connections. */
  const launch = (): Promise<ChildProcess> => {
    const proc = spawn(
      path.join(BIN, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=on',
        '-c',
        'max_connections=200',
      ],
      { ...asOwner, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    return new Promise<ChildProcess>((resolve, reject) => {
      let output = '';
      proc.on('error', (err) =>
        reject(new Error(`cannot start postgres (is it installed?): ${err.message}`)),
      );
      proc.stderr?.on('data', (d: Buffer) => {
        output += d.toString();
        if (output.includes('database system is ready to accept connections')) resolve(proc);
      });
      proc.on('exit', (code) => reject(new Error(`postgres exited with ${code}: ${output}`)));
    });
  };
  await launch();

  const admin = `postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`;
  const createTestDatabase = async (): Promise<string> => {
    databases += 1;
    const name = `test${process.pid}x${databases}`;
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(
        `CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`,
      );
    } finally {
      await client.end();
    }
    return `postgres://${SUPERUSER}@127.0.0.1:${port}/${name}`;
  };

  const stop = () =>
    new Promise<void>((resolve) => {
      const running = child;
      child = undefined;
      process.removeListener('exit', onExit);
      const removed = () => {
        rmSync(dir, { recursive: true, force: true });
        resolve();
      };
      if (!running || running.exitCode !== null || running.signalCode !== null) return removed();
      running.once('exit', removed);
      // Fast shutdown: open sessions are cut, nothing is flushed that a removed directory would need.
      running.kill('SIGINT');
      setTimeout(() => running.kill('SIGKILL'), 5000).unref();
    });
  if (t) onCleanup(t, stop);

  const crash = () =>
    new Promise<void>((resolve) => {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null || running.signalCode !== null) return resolve();
      running.once('exit', () => resolve());
      // Immediate shutdown: every session cut at once, no checkpoint; the next start recovers from the WAL,
      // as after a power cut (fsync is on, so what was committed is on disk).
      running.kill('SIGQUIT');
    });
  const restart = async () => {
    if (child) throw new Error('postgres is still running');
    await launch();
  };

  const url = await createTestDatabase();
  const pid = () => {
    if (child?.pid === undefined) throw new Error('postgres is not running');
    return child.pid;
  };
  const takeWrites = async (on: boolean): Promise<void> => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(`ALTER SYSTEM SET default_transaction_read_only = ${on ? 'off' : 'on'}`);
      await client.query('SELECT pg_reload_conf()');
    } finally {
      await client.end();
    }
    // Each session takes the reloaded settings before its next statement, once the server signalled it.
    await new Promise((resolve) => setTimeout(resolve, 500));
  };
  return {
    url,
    createTestDatabase,
    get pid() {
      return pid();
    },
    stop,
    crash,
    restart,
    takeWrites,
  };
}

/**
 * A database as an earlier release left it: the PostgreSQL migrations before `first` (a file name prefix such
 * as '019'), applied and recorded as migratePg does. Returns their names.
 */
export async function migratePgBefore(db: PgDb, first: string): Promise<string[]> {
  await db.run('CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL)');
  const older = pgMigrationFiles().filter((f) => f < first);
  for (const name of older)
    await db.transaction(async (tx) => {
      await tx.run(readFileSync(path.join(PG_MIGRATIONS, name), 'utf8'));
      await tx.run('INSERT INTO schema_migrations VALUES ($1, now())', [name]);
    });
  return older;
}
