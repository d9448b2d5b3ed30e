/**
 * The database the environment selects, as `amil db migrate` and `amil db status` see it: PostgreSQL when
 * DATABASE_URL is set, otherwise the SQLite file in DATA_DIR. Each engine has its own migrations.
 */
import type { MigrationState } from '../migration-status.ts';
import { openDatabase } from '../sqlite/db.ts';
import { sqliteMigrationStatus } from '../sqlite/migration-status.ts';
import { movedMarkOf, type MovedMark } from '../sqlite/moved-mark.ts';
import { migratePg, pgMigrationStatus } from '../pg/migrate.ts';
import { openPgPool, redactDatabaseUrl } from '../pg/pool.ts';

/** Where the store lives: DATABASE_URL, else the SQLite file. */
export interface DatabaseTarget {
  databaseUrl?: string | undefined;
  databaseFile: string;
}

export interface DatabaseStatus {
  engine: 'sqlite' | 'postgresql';
  /** The file, or the URL with its password hidden. */
  location: string;
  migrations: MigrationState[];
  /** SQLite: the file was moved to PostgreSQL by `amil migrate-store` and refuses writes (decision 258). */
  moved?: MovedMark;
}

function describe(target: DatabaseTarget): Pick<DatabaseStatus, 'engine' | 'location'> {
  return target.databaseUrl
    ? { engine: 'postgresql', location: redactDatabaseUrl(target.databaseUrl) }
    : { engine: 'sqlite', location: target.databaseFile };
}

/** Lists the migrations of the selected database and which are applied; applies nothing. */
export async function databaseStatus(target: DatabaseTarget): Promise<DatabaseStatus> {
  if (!target.databaseUrl)
    return {
      ...describe(target),
      migrations: sqliteMigrationStatus(target.databaseFile),
      moved: movedMarkOf(target.databaseFile),
    };
  const db = openPgPool(target.databaseUrl, { max: 1 });
  try {
    return { ...describe(target), migrations: await pgMigrationStatus(db) };
  } finally {
    await db.close();
  }
}

/** The names of the migrations a newer amil applied, which this release does not have. */
export const newerThanRelease = (migrations: readonly MigrationState[]): string[] =>
  migrations.filter((m) => !m.inRelease).map((m) => m.name);

/**
 * Applies the pending migrations of the selected database; the names it applied, in order, and those a
 * newer amil applied (it leaves them as they are).
 */
export async function migrateDatabase(
  target: DatabaseTarget,
): Promise<Pick<DatabaseStatus, 'engine' | 'location'> & { applied: string[]; newer: string[] }> {
  if (!target.databaseUrl) {
    const pending = sqliteMigrationStatus(target.databaseFile).filter((m) => !m.appliedAt);
    // Opening the file applies its migrations (every process does so at start-up).
    openDatabase(target.databaseFile).close();
    const status = sqliteMigrationStatus(target.databaseFile);
    const now = new Map(status.map((m) => [m.name, m.appliedAt]));
    return {
      ...describe(target),
      applied: pending.map((m) => m.name).filter((name) => now.get(name)),
      newer: newerThanRelease(status),
    };
  }
  const db = openPgPool(target.databaseUrl, { max: 1 });
  try {
    const applied = await migratePg(db);
    return { ...describe(target), applied, newer: newerThanRelease(await pgMigrationStatus(db)) };
  } finally {
    await db.close();
  }
}
