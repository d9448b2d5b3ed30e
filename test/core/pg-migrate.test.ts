/**
 * PostgreSQL migrations: applied once however many processes start together, listed by `amil db status`,
 * and a baseline that matches what SQLite's migrations build (tables, columns, types, keys).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pg from 'pg';
import { Writable } from 'node:stream';
import type Database from 'better-sqlite3';
import { loadConfig } from '../../core/config.ts';
import { openDatabase } from '../../core/store/sqlite/db.ts';
import { pgMigrationFiles } from '../../core/store/pg/migrate.ts';
import { openPgPool, type PgDb } from '../../core/store/pg/pool.ts';
import { runProgram } from '../../bin/cli/program.ts';
import { runCliProcess } from '../bin/processes.ts';
import { tempDir } from '../helpers.ts';
import { waitUntil } from '../support/faults.ts';
import { migratePgBefore, startPostgres, type TestPostgres } from '../support/postgres.ts';

let server: TestPostgres;
before(async () => {
  server = await startPostgres();
});
after(() => server.stop());

/** Runs `amil <args>` in this process over `env`; what it printed and its exit code. */
async function amil(args: string[], env: Record<string, string>) {
  let stdout = '';
  let stderr = '';
  const sink = (write: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        write(chunk.toString());
        done();
      },
    });
  const code = await runProgram(args, {
    from: 'user',
    openDeps: () => assert.fail('amil db must not open the store'),
    loadConfig: () => loadConfig({ NODE_ENV: 'test', ...env }),
    stdout: sink((s) => (stdout += s)),
    stderr: sink((s) => (stderr += s)),
  });
  return { code, stdout, stderr };
}

async function withPool<T>(url: string, fn: (db: PgDb) => Promise<T>): Promise<T> {
  const db = openPgPool(url);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

test('ten processes migrating one fresh database at once apply each migration exactly once', async () => {
  const url = await server.createTestDatabase();
  const runs = await Promise.all(
    Array.from({ length: 10 }, () =>
      runCliProcess(['db', 'migrate'], { DATABASE_URL: url, NODE_ENV: 'test' }),
    ),
  );
  for (const run of runs) assert.equal(run.code, 0, run.stderr);
  const appliedLines = runs.flatMap((run) => run.stdout.split('\n').filter((l) => l.startsWith('applied')));
  const files = pgMigrationFiles();
  assert.deepEqual(appliedLines.sort(), files.map((f) => `applied  ${f}`).sort());
  // Which process applies which migration is the lock's choice (each is taken per migration): only "once
  // each" is promised, so the count of processes that found nothing to do is not.
  const rows = await withPool(url, (db) => db.rows<{ name: string }>('SELECT name FROM schema_migrations'));
  assert.deepEqual(
    rows.map((r) => r.name),
    files,
  );
});

test('amil db status lists the migrations, pending then applied, without applying any', async () => {
  const url = await server.createTestDatabase();
  const before = await amil(['db', 'status'], { DATABASE_URL: url });
  assert.equal(before.code, 0, before.stderr);
  assert.match(before.stdout, new RegExp(`^postgresql ${url.replace(/[/.]/g, '\\$&')}\n`));
  assert.match(before.stdout, /^pending {2}001_baseline\.sql$/m);
  assert.match(before.stdout, new RegExp(`\n${pgMigrationFiles().length} pending: run amil db migrate\\.`));
  assert.equal(
    await withPool(
      url,
      async (db) => (await db.row<{ t: string | null }>("SELECT to_regclass('payments')::text AS t"))?.t,
    ),
    null,
  );

  const migrated = await amil(['db', 'migrate'], { DATABASE_URL: url });
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.match(migrated.stdout, /^applied {2}001_baseline\.sql$/m);

  const status = await amil(['db', 'status', '--json'], { DATABASE_URL: url });
  const parsed = JSON.parse(status.stdout) as {
    engine: string;
    migrations: { name: string; appliedAt?: string }[];
  };
  assert.equal(parsed.engine, 'postgresql');
  assert.deepEqual(
    parsed.migrations.map((m) => m.name),
    pgMigrationFiles(),
  );
  for (const m of parsed.migrations)
    assert.match(m.appliedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.match((await amil(['db', 'status'], { DATABASE_URL: url })).stdout, /Up to date\.$/m);
});

test('amil db status and migrate say when a newer amil has migrated the database', async () => {
  const url = await server.createTestDatabase();
  assert.equal((await amil(['db', 'migrate'], { DATABASE_URL: url })).code, 0);
  // A release rolled back: the database holds a migration this release does not have.
  await withPool(url, (db) =>
    db.run("INSERT INTO schema_migrations VALUES ('900_from_a_newer_release.sql', now())"),
  );
  const ahead =
    /^Ahead of this release: 1 migration applied by a newer amil \(900_from_a_newer_release\.sql\)\. This release runs on the schema of the release after it/m;
  const status = await amil(['db', 'status'], { DATABASE_URL: url });
  assert.equal(status.code, 0, status.stderr);
  assert.match(
    status.stdout,
    /^applied {2}900_from_a_newer_release\.sql {2}\S+ {2}\(not in this release\)$/m,
  );
  assert.doesNotMatch(status.stdout, /Up to date/);
  assert.match(status.stdout, /^Nothing pending\.$/m);
  assert.match(status.stdout, ahead);
  const json = JSON.parse((await amil(['db', 'status', '--json'], { DATABASE_URL: url })).stdout) as {
    migrations: { name: string; inRelease: boolean }[];
  };
  assert.deepEqual(
    json.migrations.filter((m) => !m.inRelease).map((m) => m.name),
    ['900_from_a_newer_release.sql'],
  );
  const migrated = await amil(['db', 'migrate'], { DATABASE_URL: url });
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.match(migrated.stdout, /^Nothing to apply\.$/m);
  assert.match(migrated.stdout, ahead);
});

test('amil db status never prints the database password', async () => {
  const url = await server.createTestDatabase();
  const withPassword = url.replace('amil@', 'amil:s3cret-pw@');
  const result = await amil(['db', 'status'], { DATABASE_URL: withPassword });
  assert.equal(result.code, 0, result.stderr);
  assert.ok(!`${result.stdout}${result.stderr}`.includes('s3cret-pw'));
  assert.match(result.stdout, /amil:\*\*\*@127\.0\.0\.1/);
});

test('a database that does not sort text by bytes is refused before anything is applied', async () => {
  const url = await server.createTestDatabase();
  const name = new URL(url).pathname.slice(1);
  const other = `${name}_en`;
  await withPool(url, (db) =>
    db
      .run(`CREATE DATABASE ${other} TEMPLATE template0 LC_COLLATE 'en_US.UTF-8' LC_CTYPE 'en_US.UTF-8'`)
      .catch(() =>
        // Without that locale installed, any collation but C shows the same refusal.
        db.run(`CREATE DATABASE ${other} TEMPLATE template0 LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8'`),
      ),
  );
  const result = await amil(['db', 'migrate'], { DATABASE_URL: url.replace(`/${name}`, `/${other}`) });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /amil needs the C collation/);
});

test('a database whose default collation is ICU is refused, though its LC_COLLATE says C', async () => {
  // PostgreSQL 15's LOCALE_PROVIDER icu (initdb --locale-provider=icu, or a managed service's default):
  // pg_database.datcollate is C, and yet every ORDER BY on text is linguistic (a before B).
  const url = await server.createTestDatabase();
  const name = new URL(url).pathname.slice(1);
  const other = `${name}_icu`;
  await withPool(url, (db) =>
    db.run(
      `CREATE DATABASE ${other} TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' ` +
        "LC_COLLATE 'C' LC_CTYPE 'C'",
    ),
  );
  const icuUrl = url.replace(`/${name}`, `/${other}`);
  const sorted = await withPool(icuUrl, (db) =>
    db.rows<{ s: string }>("SELECT s FROM unnest(ARRAY['B', 'a']) AS s ORDER BY s"),
  );
  assert.deepEqual(
    sorted.map((r) => r.s),
    ['a', 'B'],
    'this database sorts linguistically',
  );
  const result = await amil(['db', 'migrate'], { DATABASE_URL: icuUrl });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /sorts text by ICU's "en-US"; amil needs the C collation/);
  const tables = await withPool(icuUrl, (db) =>
    db.rows("SELECT 1 FROM pg_tables WHERE schemaname = 'public'"),
  );
  assert.equal(tables.length, 0, 'nothing was applied');
});

test('a migration whose index was built beforehand and left invalid (a cancelled CONCURRENTLY) is refused', async () => {
  const url = await server.createTestDatabase();
  // The release before 019, as migratePg leaves it.
  await withPool(url, (db) => migratePgBefore(db, '019'));
  // The operator builds 019's index beforehand (docs/deployment.md). It waits for a transaction holding an
  // older snapshot (a long report, a backup), and the operator presses Ctrl-C: an invalid index is left,
  // and the same statement run again says "already exists, skipping".
  const build = `CREATE INDEX CONCURRENTLY IF NOT EXISTS ledger_by_day_in_posting_order
    ON ledger_entries (sink, business_date, posting_id, version)`;
  const snapshot = new pg.Client({ connectionString: url });
  const operator = new pg.Client({ connectionString: url });
  await snapshot.connect();
  await operator.connect();
  try {
    await snapshot.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await snapshot.query('SELECT txid_current()');
    const building = operator.query(build).then(
      () => 'built',
      (err: Error) => err.message,
    );
    await withPool(url, async (db) => {
      await waitUntil(
        async () =>
          (await db.rows("SELECT 1 FROM pg_stat_activity WHERE query LIKE 'CREATE INDEX CONCURRENTLY%'"))
            .length > 0,
        10_000,
        'the build to start',
      );
      await db.run(
        "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'CREATE INDEX CONCURRENTLY%'",
      );
    });
    assert.match(await building, /canceling statement/);
    await snapshot.query('COMMIT');
    await operator.query(build);
  } finally {
    await snapshot.end();
    await operator.end();
  }
  const dayIndexes = () =>
    withPool(url, (db) =>
      db.rows<{ name: string; valid: boolean }>(
        `SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         WHERE i.indrelid = 'ledger_entries'::regclass AND c.relname LIKE 'ledger_by_day%' ORDER BY 1`,
      ),
    );
  assert.deepEqual(await dayIndexes(), [
    { name: 'ledger_by_day', valid: true },
    { name: 'ledger_by_day_in_posting_order', valid: false },
  ]);

  const refused = await amil(['db', 'migrate'], { DATABASE_URL: url });
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /019_ledger_by_day_in_posting_order\.sql was not applied: index ledger_by_day_in_posting_order exists but is not valid .*DROP INDEX CONCURRENTLY ledger_by_day_in_posting_order/,
  );
  assert.deepEqual(
    await dayIndexes(),
    [
      { name: 'ledger_by_day', valid: true },
      { name: 'ledger_by_day_in_posting_order', valid: false },
    ],
    'the index it replaces is still there',
  );

  // What the refusal says to do, then the migration goes through with a valid index.
  await withPool(url, (db) => db.run('DROP INDEX CONCURRENTLY ledger_by_day_in_posting_order'));
  const migrated = await amil(['db', 'migrate'], { DATABASE_URL: url });
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.match(migrated.stdout, /^applied {2}019_ledger_by_day_in_posting_order\.sql$/m);
  assert.deepEqual(await dayIndexes(), [{ name: 'ledger_by_day_in_posting_order', valid: true }]);
});

/** One column as both engines describe it, in SQLite's words. */
interface Column {
  type: string;
  notNull: boolean;
}
type Schema = Record<string, Record<string, Column>>;

function sqliteSchema(db: Database.Database): { tables: Schema; keys: string[] } {
  const tables: Schema = {};
  const keys: string[] = [];
  const names = db
    .prepare<[], { name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all();
  for (const { name } of names) {
    const columns = db
      .prepare<[], { name: string; type: string; notnull: number; pk: number }>(`PRAGMA table_info(${name})`)
      .all();
    tables[name] = Object.fromEntries(
      columns.map((c) => [c.name, { type: c.type, notNull: c.notnull === 1 || c.pk > 0 }]),
    );
    const pk = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
    keys.push(`${name} (${pk.map((c) => c.name).join(', ')})`);
    for (const index of db
      .prepare<[], { name: string; unique: number; origin: string; partial: number }>(
        `PRAGMA index_list(${name})`,
      )
      .all()) {
      if (index.unique !== 1 || index.origin === 'pk') continue;
      const cols = db
        .prepare<[], { name: string }>(`PRAGMA index_info(${index.name})`)
        .all()
        .map((c) => c.name);
      keys.push(`${name} (${cols.join(', ')})${index.partial ? ' partial' : ''}`);
    }
  }
  return { tables, keys: keys.sort() };
}

/** SQLite's type for a PostgreSQL type: what a value of that column holds on the other engine. */
const AS_SQLITE: Record<string, string> = {
  text: 'TEXT',
  'timestamp with time zone': 'TEXT',
  bigint: 'INTEGER',
  integer: 'INTEGER',
  bytea: 'BLOB',
};

async function pgSchema(db: PgDb): Promise<{ tables: Schema; keys: string[] }> {
  const columns = await db.rows<{ table: string; column: string; type: string; nullable: string }>(
    `SELECT table_name AS table, column_name AS column, data_type AS type, is_nullable AS nullable
     FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
  );
  const tables: Schema = {};
  for (const c of columns)
    (tables[c.table] ??= {})[c.column] = { type: AS_SQLITE[c.type] ?? c.type, notNull: c.nullable === 'NO' };
  const indexes = await db.rows<{ table: string; columns: string; partial: boolean }>(
    `SELECT t.relname AS table, i.indpred IS NOT NULL AS partial,
       (SELECT string_agg(pg_get_indexdef(i.indexrelid, k.n::int, true), ', ' ORDER BY k.n)
        FROM unnest(i.indkey) WITH ORDINALITY k (attnum, n)) AS columns
     FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace s ON s.oid = t.relnamespace
     WHERE s.nspname = 'public' AND i.indisunique`,
  );
  return {
    tables,
    // A key on lower(column) is PostgreSQL's spelling of SQLite's COLLATE NOCASE key on the column.
    keys: indexes
      .map(
        (i) => `${i.table} (${i.columns.replace(/\blower\((\w+)\)/g, '$1')})${i.partial ? ' partial' : ''}`,
      )
      .sort(),
  };
}

/** Tables PostgreSQL has on purpose and SQLite does not, and why. */
const ONLY_IN_POSTGRES: Record<string, string> = {
  recon_files:
    "the workbooks, shared by several machines through the database; SQLite's are files in DATA_DIR",
  payment_day_count_deltas:
    "each payment's change of its day count, appended, so concurrent payments of an agency never wait on one count row; SQLite's single writer updates payment_day_counts in place (decision 246)",
  callback_count_deltas:
    "each agency's settled callbacks by state in rows each settlement appends, so no delivery locks a count another needs; SQLite keeps callback_counts in place on its one writer (decision 245)",
  ledger_entry_day_counts:
    "each agency's postings per business day, kept so that concurrent appends never need to see each other's versions of a posting; SQLite's one writer keeps ledger_day_counts in place (decisions 234, 248)",
  ledger_entry_day_count_deltas:
    "each ledger append's entries per agency and day, appended, folded into ledger_entry_day_counts by the upkeep (decision 248)",
  ledger_unpaired_versions:
    'the later versions appended that the upkeep has not yet paired with an older version of their posting (decision 248)',
  ledger_day_figures:
    "the dashboard overview's figures of each agency's postings per day, worked out again from the ledger when the upkeep folds a day's appended counts; SQLite's one writer keeps them in ledger_day_counts (decision 251)",
};

/** Tables SQLite has on purpose and PostgreSQL does not, and why. */
const ONLY_IN_SQLITE: Record<string, string> = {
  ledger_day_counts:
    "the zakat report's per-day counts of latest versions and the overview's figures, kept in place by SQLite's one writer; PostgreSQL counts each append's entries and later versions apart, paired by the upkeep, and figures a day when it folds (decisions 234, 248, 251)",
  callback_counts:
    "each agency's callbacks by state, so the dashboard's callbacks page never counts an agency's history on SQLite's one thread; PostgreSQL appends count rows instead (decisions 239, 245)",
};

/** Every difference between the two schemas, in words; empty when they match. */
function differences(sqlite: Schema, pg: Schema): string[] {
  const found: string[] = [];
  for (const [table, columns] of Object.entries(sqlite)) {
    const other = pg[table];
    if (!other && table in ONLY_IN_SQLITE) continue;
    if (!other) {
      found.push(`table ${table} is missing in PostgreSQL`);
      continue;
    }
    for (const [name, column] of Object.entries(columns)) {
      const twin = other[name];
      if (!twin) found.push(`column ${table}.${name} is missing in PostgreSQL`);
      else if (twin.type !== column.type)
        found.push(`${table}.${name} is ${column.type} in SQLite, ${twin.type} in PostgreSQL`);
      // Only the heartbeat's time differs on purpose: NULL until the first beat, where SQLite holds ''.
      else if (twin.notNull !== column.notNull && `${table}.${name}` !== 'health_heartbeat.at')
        found.push(`${table}.${name} is ${column.notNull ? '' : 'not '}NOT NULL in SQLite only`);
    }
    for (const name of Object.keys(other))
      if (!(name in columns)) found.push(`column ${table}.${name} is only in PostgreSQL`);
  }
  for (const table of Object.keys(pg))
    if (!(table in sqlite) && !(table in ONLY_IN_POSTGRES))
      found.push(`table ${table} is only in PostgreSQL`);
  return found;
}

test('the PostgreSQL baseline has the tables, columns, types and unique keys SQLite migrations end with', async (t) => {
  const sqlite = openDatabase(path.join(tempDir(t), 'amil.db'));
  const expected = sqliteSchema(sqlite);
  sqlite.close();
  const url = await server.createTestDatabase();
  assert.equal((await amil(['db', 'migrate'], { DATABASE_URL: url })).code, 0);
  const actual = await withPool(url, pgSchema);
  assert.deepEqual(differences(expected.tables, actual.tables), []);
  // The keys that make every write idempotent: a batch posted twice, a callback queued twice.
  assert.deepEqual(
    actual.keys.filter((key) => !(key.split(' ')[0]! in ONLY_IN_POSTGRES)),
    expected.keys.filter((key) => !(key.split(' ')[0]! in ONLY_IN_SQLITE)),
  );
  assert.ok(actual.keys.includes('payments (agency_code, ref_no) partial'));
  assert.ok(actual.keys.includes('bank_postings (partner_id, orderno)'));
});

test('the comparison fails when a SQLite migration adds a column or table PostgreSQL lacks', async (t) => {
  const sqlite = openDatabase(path.join(tempDir(t), 'amil.db'));
  sqlite.exec(`ALTER TABLE payments ADD COLUMN tip_sen INTEGER;
    CREATE TABLE refunds (id INTEGER PRIMARY KEY, amount_sen INTEGER NOT NULL) STRICT`);
  const expected = sqliteSchema(sqlite);
  sqlite.close();
  const url = await server.createTestDatabase();
  assert.equal((await amil(['db', 'migrate'], { DATABASE_URL: url })).code, 0);
  const actual = await withPool(url, pgSchema);
  assert.deepEqual(differences(expected.tables, actual.tables), [
    'column payments.tip_sen is missing in PostgreSQL',
    'table refunds is missing in PostgreSQL',
  ]);
  assert.notDeepEqual(actual.keys, expected.keys);
});

test('sen are bigint and instants timestamptz in the baseline', async () => {
  const url = await server.createTestDatabase();
  assert.equal((await amil(['db', 'migrate'], { DATABASE_URL: url })).code, 0);
  const columns = await withPool(url, (db) =>
    db.rows<{ column: string; type: string }>(
      `SELECT table_name || '.' || column_name AS column, data_type AS type FROM information_schema.columns
       WHERE table_schema = 'public' AND (column_name LIKE '%\\_sen' OR column_name LIKE '%\\_at')`,
    ),
  );
  assert.ok(columns.length > 40);
  for (const { column, type } of columns)
    assert.equal(type, column.endsWith('_sen') ? 'bigint' : 'timestamp with time zone', column);
});
