/**
 * Moves an embedded installation (one SQLite file and its workbooks in DATA_DIR) into an empty PostgreSQL
 * database, keeping every row and id, in one PostgreSQL transaction that commits only when each table's
 * row count and checksum, and each workbook's SHA-256, read back from PostgreSQL equal the source's. What
 * `amil migrate-store` runs (docs/deployment.md).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqliteMigrationStatus } from './migration-status.ts';
import {
  checkWorkbooks,
  copiedWhole,
  copyWorkbooks,
  describeMissing,
  readBackWorkbooks,
  type MissingWorkbook,
  type RunWorkbook,
  type WorkbookCopy,
} from './migrate-workbooks.ts';
import { migratePg, pgMigrationStatus } from '../pg/migrate.ts';
import { openPgPool, redactDatabaseUrl, type PgDb, type PgTx } from '../pg/pool.ts';
import { LOCK_WAIT_MS } from '../outage.ts';
import { MOVED_TABLE, liftMovedMark, markMoved } from './moved-mark.ts';

/** One table copied: its rows and the SHA-256 of its rows in key order, on each side. */
export interface TableCopy {
  table: string;
  rows: number;
  checksum: string;
  targetRows: number;
  targetChecksum: string;
}

/** What a move copied: every table, every workbook, and the runs that moved without theirs. */
export interface StoreCopy {
  tables: TableCopy[];
  workbooks: WorkbookCopy[];
  /** Runs whose workbook was missing or other bytes, moved without it (only with `allowMissingWorkbooks`). */
  leftOut: MissingWorkbook[];
  /**
   * PostgreSQL already held exactly this store (an earlier move committed it and was stopped before it marked
   * the file, decision 260): nothing was copied, every table and workbook was compared.
   */
  alreadyCopied?: boolean;
  /** Whether the SQLite file now refuses writes (decision 258); when not, why (the copy stands either way). */
  sourceMarked?: boolean;
  markError?: string;
}

export interface MigrateStoreOptions {
  /** Where the runs' workbook files are (their paths are relative to it): DATA_DIR, the SQLite file's folder. */
  dataDir?: string;
  /** Move the runs whose workbook is missing or differs from its SHA-256 without it, instead of refusing. */
  allowMissingWorkbooks?: boolean;
  /** How long to wait for a process writing the SQLite file to finish its write (default LOCK_WAIT_MS). */
  lockWaitMs?: number;
  /** The instant the mark on the SQLite file records (default now). */
  now?: () => Date;
}

interface Column {
  name: string;
  type: string;
  pk: number;
}

/**
 * Tables PostgreSQL fills itself as rows are copied (the payments' triggers keep the day counts): copied
 * last, over what the triggers wrote, so they hold exactly the source's rows (a count moved to zero too).
 */
const DERIVED = ['payment_day_counts'];
/**
 * SQLite's own: PostgreSQL's triggers count the ledger entries copied into it per agency and day (decision
 * 248), and its callback counts are rows its triggers append (decision 245).
 */
const SQLITE_ONLY = ['ledger_day_counts', 'callback_counts'];
/** Rows per INSERT: well under PostgreSQL's 65,535 parameters for the widest table. */
const ROWS_PER_INSERT = 500;

function tablesInOrder(db: Database.Database): string[] {
  const names = db
    .prepare<[], { name: string }>(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
         AND name <> 'schema_migrations' ORDER BY name`,
    )
    .all()
    .map((r) => r.name)
    .filter((name) => !SQLITE_ONLY.includes(name) && name !== MOVED_TABLE);
  // Parents before children, so every foreign key finds its row.
  const ordered: string[] = [];
  const visit = (name: string, path: Set<string>) => {
    if (ordered.includes(name) || path.has(name)) return;
    path.add(name);
    for (const fk of db.prepare<[], { table: string }>(`PRAGMA foreign_key_list(${name})`).all())
      if (fk.table !== name) visit(fk.table, path);
    ordered.push(name);
  };
  for (const name of names) visit(name, new Set());
  return [...ordered.filter((t) => !DERIVED.includes(t)), ...DERIVED.filter((t) => ordered.includes(t))];
}

/** One row as canonical text for the checksum: instants and text compare as strings, blobs as hex. */
function rowDigest(columns: readonly Column[], row: Record<string, unknown>): string {
  return JSON.stringify(
    columns.map((c) => {
      const value = row[c.name];
      if (Buffer.isBuffer(value)) return `x${value.toString('hex')}`;
      // SQLite's heartbeat holds '' until the first beat; PostgreSQL holds NULL there.
      return value === '' && c.name === 'at' ? null : (value ?? null);
    }),
  );
}

/**
 * A SQLite table's rows in key order, integers read exactly: better-sqlite3 would round one beyond 2^53 to
 * the nearest double without a word, and PostgreSQL's read-back then refuses it (pool.ts). No amil write
 * makes one; a file edited by hand may hold one, and the move refuses it, naming where.
 */
function* sourceRows(
  sqlite: Database.Database,
  table: string,
  columns: readonly Column[],
): Generator<Record<string, unknown>> {
  const select = sqlite
    .prepare<[], Record<string, unknown>>(
      `SELECT ${columns.map((c) => c.name).join(', ')} FROM ${table} ORDER BY ${orderBy(columns)}`,
    )
    .safeIntegers(true);
  for (const row of select.iterate()) {
    for (const [name, value] of Object.entries(row)) {
      if (typeof value !== 'bigint') continue;
      if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER))
        throw new Error(
          `${table}.${name} holds ${value}, an integer beyond 2^53 that no amil write makes and JavaScript ` +
            `cannot hold exactly (the row keyed ${orderBy(columns)} = ${keyOf(columns, row)}); nothing was copied`,
        );
      row[name] = Number(value);
    }
    yield row;
  }
}

function keyOf(columns: readonly Column[], row: Record<string, unknown>): string {
  const key = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
  return (key.length > 0 ? key : columns).map((c) => String(row[c.name])).join(', ');
}

function orderBy(columns: readonly Column[]): string {
  const key = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
  return (key.length > 0 ? key : columns).map((c) => c.name).join(', ');
}

async function copyTable(
  sqlite: Database.Database,
  tx: PgTx,
  table: string,
): Promise<Omit<TableCopy, 'targetRows' | 'targetChecksum'>> {
  const columns = sqlite.prepare<[], Column>(`PRAGMA table_info(${table})`).all();
  const names = columns.map((c) => c.name);
  const hash = createHash('sha256');
  let rows = 0;
  let chunk: unknown[][] = [];
  const flush = async () => {
    if (chunk.length === 0) return;
    const values = chunk.map(
      (_, r) => `(${names.map((__, c) => `$${r * names.length + c + 1}`).join(', ')})`,
    );
    await tx.run(`INSERT INTO ${table} (${names.join(', ')}) VALUES ${values.join(', ')}`, chunk.flat());
    chunk = [];
  };
  for (const row of sourceRows(sqlite, table, columns)) {
    hash.update(`${rowDigest(columns, row)}\n`);
    rows += 1;
    chunk.push(
      columns.map((c) => {
        const value = row[c.name];
        return value === '' && table === 'health_heartbeat' && c.name === 'at' ? null : value;
      }),
    );
    if (chunk.length >= ROWS_PER_INSERT) await flush();
  }
  await flush();
  return { table, rows, checksum: hash.digest('hex') };
}

/** The count and checksum of a SQLite table's rows, as copyTable reckons them. */
function sourceDigest(sqlite: Database.Database, table: string): { rows: number; checksum: string } {
  const columns = sqlite.prepare<[], Column>(`PRAGMA table_info(${table})`).all();
  const hash = createHash('sha256');
  let rows = 0;
  for (const row of sourceRows(sqlite, table, columns)) {
    hash.update(`${rowDigest(columns, row)}\n`);
    rows += 1;
  }
  return { rows, checksum: hash.digest('hex') };
}

async function readBack(
  tx: PgTx,
  table: string,
  columns: readonly Column[],
): Promise<{ rows: number; checksum: string }> {
  const hash = createHash('sha256');
  let rows = 0;
  const sql = `SELECT ${columns.map((c) => c.name).join(', ')} FROM ${table} ORDER BY ${orderBy(columns)}`;
  for await (const batch of tx.cursor<Record<string, unknown>>(sql, [], 1000)) {
    for (const row of batch) hash.update(`${rowDigest(columns, row)}\n`);
    rows += batch.length;
  }
  return { rows, checksum: hash.digest('hex') };
}

/**
 * Copies the SQLite store at `file` into the PostgreSQL database at `url` (migrated first, and required
 * empty), with every run's workbook from the data directory, holding the file's write lock throughout; once
 * PostgreSQL has committed, marks the file moved (it refuses writes from then on). A target that already
 * holds exactly this store (a move stopped between its commit and the mark) is compared, not copied, and the
 * file is marked. Resolves with what was copied; rejects, committing and marking nothing, when the source is
 * not fully migrated, another process keeps writing it, a workbook is missing or differs from its run's
 * SHA-256 (unless allowed), the target holds other data, or anything reads back different.
 */
export async function migrateStore(
  file: string,
  url: string,
  options: MigrateStoreOptions = {},
): Promise<StoreCopy> {
  // A mistyped path is said as such (the migration status reads a missing file as all pending).
  if (!existsSync(file)) throw new Error(`${file} does not exist: name the SQLite file of the store to move`);
  const pending = sqliteMigrationStatus(file).filter((m) => !m.appliedAt);
  if (pending.length > 0)
    throw new Error(
      `${file} has ${pending.length} SQLite migrations pending (${pending[0]?.name}...): run amil db migrate on it first`,
    );
  const dataDir = options.dataDir ?? path.dirname(file);
  const sqlite = new Database(file, { fileMustExist: true });
  try {
    holdWriteLock(sqlite, file, options.lockWaitMs ?? LOCK_WAIT_MS);
    const copy = await copyHeld(sqlite, url, dataDir, options);
    // Committed in PostgreSQL: from here the file refuses every write (decision 258), in the transaction that
    // held the write lock through the copy, so no write slips in between the copy and the mark.
    try {
      markMoved(sqlite, {
        target: redactDatabaseUrl(url),
        at: (options.now?.() ?? new Date()).toISOString(),
      });
      sqlite.exec('COMMIT');
      return { ...copy, sourceMarked: true };
    } catch (err) {
      // The copy stands (PostgreSQL committed it); the operator is told the old file can still be written.
      return { ...copy, sourceMarked: false, markError: err instanceof Error ? err.message : String(err) };
    }
  } finally {
    if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
    sqlite.close();
  }
}

/**
 * Takes the SQLite file's write lock for the whole copy (decision 258): the copy is one snapshot, and a
 * server still running on the file waits, then answers its writes 503, rather than accepting what the copy
 * has already passed. Refuses when another process keeps writing past `waitMs`.
 */
function holdWriteLock(sqlite: Database.Database, file: string, waitMs: number): void {
  sqlite.pragma(`busy_timeout = ${waitMs}`);
  try {
    sqlite.exec('BEGIN IMMEDIATE');
  } catch (err) {
    if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
    throw new Error(
      `another process has been writing ${file} for ${waitMs} ms (a server or worker still running on it?): ` +
        'stop every process using the file, then run the move again; nothing was copied',
    );
  }
}

/** The copy itself, the SQLite file's write lock held: PostgreSQL's transaction, committed when it resolves. */
async function copyHeld(
  sqlite: Database.Database,
  url: string,
  dataDir: string,
  options: MigrateStoreOptions,
): Promise<StoreCopy> {
  // Before anything is written: a workbook that cannot move is the operator's to decide (decision 207).
  const workbooks = await checkWorkbooks(sqlite, dataDir);
  const n = workbooks.missing.length;
  if (n > 0 && !options.allowMissingWorkbooks)
    throw new Error(
      `the workbook${n === 1 ? ' of 1 run is not as it was' : `s of ${n} runs are not as they were`} recorded ` +
        `under ${dataDir}: ${describeMissing(workbooks.missing)}. Put them back (or name the folder that holds ` +
        `them with --data-dir), or move these runs without their workbooks with --allow-missing-workbooks; ` +
        `nothing was copied`,
    );
  // No idle-in-transaction limit (decision 263) for the move: between its statements it reads the SQLite
  // file, as long as a table takes, in the one transaction it commits.
  const pg = openPgPool(url, { max: 2, idleTransactionMs: 0 });
  try {
    const tables = tablesInOrder(sqlite);
    await refuseOccupiedBeforeMigrating(pg, tables);
    await migratePg(pg);
    return await pg.transaction(
      async (tx) => {
        const occupied = await firstOccupied(tx, tables);
        if (occupied)
          return compareHeld(sqlite, tx, tables, workbooks, occupied, options.allowMissingWorkbooks === true);
        const copies = await copyTables(sqlite, tx, tables);
        const copied = await copyWorkbooks(tx, dataDir, workbooks.ready);
        const differing = copied.filter((c) => !copiedWhole(c)).map((c) => c.runId);
        if (differing.length > 0)
          throw new Error(
            `PostgreSQL reads back differently for the workbooks of runs ${differing.join(', ')}` +
              ` (or their files changed during the copy): nothing was committed`,
          );
        return { tables: copies, workbooks: copied, leftOut: workbooks.missing };
      },
      { isolation: 'serializable' },
    );
  } finally {
    await pg.close();
  }
}

/**
 * Lifts the mark of a move from the SQLite file (`amil migrate-store --reopen`): it can be written, and
 * opened by a server, again. PostgreSQL's copy is left as it is. Resolves whether there was a mark.
 */
export function reopenMovedStore(file: string, lockWaitMs = LOCK_WAIT_MS): boolean {
  const sqlite = new Database(file, { fileMustExist: true });
  try {
    sqlite.pragma(`busy_timeout = ${lockWaitMs}`);
    return sqlite.transaction(() => liftMovedMark(sqlite)).immediate();
  } finally {
    sqlite.close();
  }
}

/**
 * A target that holds rows and still has migrations of this release to apply is no earlier move of this
 * file (that move migrated it): another installation, or a database meant for something else. It is
 * refused before anything is applied to it: a refusal leaves the target as it was, where a migration may
 * lock and rewrite a table of a live database.
 */
async function refuseOccupiedBeforeMigrating(pg: PgDb, tables: readonly string[]): Promise<void> {
  const pending = (await pgMigrationStatus(pg)).filter((m) => !m.appliedAt);
  if (pending.length === 0) return;
  for (const table of tables) {
    if (table === 'health_heartbeat') continue;
    const found = await pg.row<{ name: string | null }>('SELECT to_regclass($1)::text AS name', [table]);
    if (found?.name && (await pg.row(`SELECT 1 FROM ${table} LIMIT 1`)))
      throw new Error(
        `the target database is not empty (table ${table} has rows) and has ${pending.length} of this ` +
          `release's migrations to apply (${pending[0]?.name}...), so it is no earlier move of this file; ` +
          'nothing was copied or applied. To move this file, name an empty database (a move of this file that ' +
          'an older amil committed and did not mark is completed by that release)',
      );
  }
}

/** The first table of the target that holds rows (but the heartbeat every server writes), if any. */
async function firstOccupied(tx: PgTx, tables: readonly string[]): Promise<string | undefined> {
  for (const table of tables) {
    if (table === 'health_heartbeat') continue;
    if (await tx.row(`SELECT 1 FROM ${table} LIMIT 1`)) return table;
  }
  return undefined;
}

/**
 * A target that holds rows: either this very store, committed by an earlier move that was stopped (killed,
 * the machine lost) before it marked the file (decision 260), which the move then completes by marking it;
 * or anything else, which it refuses. Compares every table (but the heartbeat) and every workbook; writes
 * nothing.
 */
async function compareHeld(
  sqlite: Database.Database,
  tx: PgTx,
  tables: readonly string[],
  workbooks: { ready: RunWorkbook[]; missing: MissingWorkbook[] },
  occupied: string,
  allowMissingWorkbooks: boolean,
): Promise<StoreCopy> {
  const copies: TableCopy[] = [];
  for (const table of tables) {
    if (table === 'health_heartbeat') continue;
    const source = sourceDigest(sqlite, table);
    const columns = sqlite.prepare<[], Column>(`PRAGMA table_info(${table})`).all();
    const back = await readBack(tx, table, columns);
    copies.push({ table, ...source, targetRows: back.rows, targetChecksum: back.checksum });
  }
  // Every run's workbook as PostgreSQL holds it, the file here or not: one it holds whole was moved; one it
  // does not hold at all was left out by the earlier move (--allow-missing-workbooks then) and is left out
  // again, allowed as then; any other bytes differ.
  const held = await readBackWorkbooks(tx, [...workbooks.ready, ...workbooks.missing]);
  const moved = held.filter(copiedWhole);
  const absent = held.filter((w) => w.targetBytes === 0);
  const missingNow = new Map(workbooks.missing.map((m) => [m.runId, m]));
  const differing = [
    ...copies.filter((c) => c.rows !== c.targetRows || c.checksum !== c.targetChecksum).map((c) => c.table),
    ...held.filter((w) => !copiedWhole(w) && w.targetBytes > 0).map((w) => `the workbook of run ${w.runId}`),
  ];
  if (differing.length > 0)
    throw new Error(
      `the target database is not empty (table ${occupied} has rows) and is not a copy of this file ` +
        `(${differing.slice(0, 5).join(', ')}${differing.length > 5 ? ', ...' : ''} differ); nothing was ` +
        'copied. To move this file, name an empty database. If an earlier move of this file went there and ' +
        'PostgreSQL has been written since, that move stands: stop every process using this file',
    );
  // Only once the rest is this store: a run PostgreSQL holds no workbook for was left out by that move.
  if (absent.length > 0 && !allowMissingWorkbooks)
    throw new Error(
      `PostgreSQL holds no workbook for run${absent.length === 1 ? '' : 's'} ` +
        `${absent.map((w) => w.runId).join(', ')}: the earlier move left ${absent.length === 1 ? 'it' : 'them'} ` +
        'out. Run the move again with --allow-missing-workbooks to finish it without them; nothing was copied',
    );
  const leftOut = absent.map(
    (w) => missingNow.get(w.runId) ?? { ...w, problem: 'was left out by the earlier move' },
  );
  return { tables: copies, workbooks: moved, leftOut, alreadyCopied: true };
}

/** Every table copied in `tx`, each read back; throws when any reads back different. */
async function copyTables(
  sqlite: Database.Database,
  tx: PgTx,
  tables: readonly string[],
): Promise<TableCopy[]> {
  // The baseline's heartbeat row is replaced by the source's.
  await tx.run('DELETE FROM health_heartbeat');
  // DERIVED tables come last, after the rows that fill them.
  const copies: TableCopy[] = [];
  for (const table of tables) {
    // A derived table is copied over what the triggers wrote, and the rows they appended to be folded
    // into it (decision 246) go: the copy holds every payment already.
    if (DERIVED.includes(table)) await tx.run(`DELETE FROM ${table}`);
    if (table === 'payment_day_counts') await tx.run('DELETE FROM payment_day_count_deltas');
    const copied = await copyTable(sqlite, tx, table);
    const columns = sqlite.prepare<[], Column>(`PRAGMA table_info(${table})`).all();
    const back = await readBack(tx, table, columns);
    copies.push({ ...copied, targetRows: back.rows, targetChecksum: back.checksum });
    // Identity columns continue after the highest id copied, as SQLite's rowids would.
    if (columns.some((c) => c.name === 'id' && c.pk === 1 && c.type === 'INTEGER'))
      await tx.run(
        `SELECT setval(pg_get_serial_sequence('${table}', 'id'), (SELECT max(id) FROM ${table}))
         WHERE EXISTS (SELECT 1 FROM ${table}) AND pg_get_serial_sequence('${table}', 'id') IS NOT NULL`,
      );
  }
  const differing = copies.filter((c) => c.rows !== c.targetRows || c.checksum !== c.targetChecksum);
  if (differing.length > 0)
    throw new Error(
      `PostgreSQL reads back differently for ${differing.map((c) => c.table).join(', ')}: nothing was committed`,
    );
  return copies;
}
