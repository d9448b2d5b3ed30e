/**
 * Which migrations a database has applied, for `amil db status` and `amil db migrate` on either engine
 * (each engine reads its own: sqlite/migration-status.ts, pg/migrate.ts).
 */
import { readdirSync } from 'node:fs';

/** One migration and when it was applied (undefined: pending). */
export interface MigrationState {
  name: string;
  appliedAt: string | undefined;
  /** False for a migration applied by a newer amil: this release has no such file. */
  inRelease: boolean;
}

/** The NNN_name.sql files of a migrations directory, in the order they apply. */
export function migrationFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_.+\.sql$/.test(f))
    .sort();
}

/** Files and applied rows side by side, by name; a row with no file (applied by a newer amil) is listed too. */
export function mergeStatus(
  files: readonly string[],
  rows: readonly { name: string; appliedAt: string }[],
): MigrationState[] {
  const appliedAt = new Map(rows.map((r) => [r.name, r.appliedAt]));
  const inRelease = new Set(files);
  const names = [...new Set([...files, ...appliedAt.keys()])].sort();
  return names.map((name) => ({ name, appliedAt: appliedAt.get(name), inRelease: inRelease.has(name) }));
}
