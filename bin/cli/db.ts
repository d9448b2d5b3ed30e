/** `amil db`: the database the environment selects (DATABASE_URL, else SQLite in DATA_DIR) and its migrations. */
import type { Command } from 'commander';
import { databaseStatus, migrateDatabase, newerThanRelease } from '../../core/store/admin/database.ts';
import type { CliContext } from './context.ts';

/** Adds the `db` commands. */
export function register(program: Command, cli: CliContext): void {
  const { print } = cli;
  const db = program
    .command('db')
    .description('The database: PostgreSQL when DATABASE_URL is set, else SQLite in DATA_DIR');

  db.command('migrate')
    .description('Apply the pending migrations (safe to run from several machines at once)')
    .action(async () => {
      const { engine, location, applied, newer } = await migrateDatabase(cli.config());
      print(`${engine} ${location}`);
      for (const name of applied) print(`applied  ${name}`);
      print(applied.length === 0 ? 'Nothing to apply.' : `Applied ${applied.length} migrations.`);
      if (newer.length > 0) print(aheadOfRelease(newer));
    });

  db.command('status')
    .description('List the migrations and when each was applied; applies nothing')
    .option('--json', 'print the status as JSON')
    .action(async (opts: { json?: boolean }) => {
      const status = await databaseStatus(cli.config());
      if (opts.json) return cli.printJson(status);
      print(`${status.engine} ${status.location}`);
      for (const m of status.migrations)
        print(
          `${m.appliedAt ? 'applied' : 'pending'}  ${m.name}  ${m.appliedAt ?? ''}${
            m.inRelease ? '' : '  (not in this release)'
          }`.trimEnd(),
        );
      const pending = status.migrations.filter((m) => !m.appliedAt).length;
      const newer = newerThanRelease(status.migrations);
      if (pending > 0) print(`${pending} pending: run amil db migrate.`);
      else print(newer.length === 0 ? 'Up to date.' : 'Nothing pending.');
      if (newer.length > 0) print(aheadOfRelease(newer));
      if (status.moved)
        print(
          `Moved to PostgreSQL (${status.moved.target}) at ${status.moved.at} by amil migrate-store: ` +
            'this file refuses writes. Set DATABASE_URL to use PostgreSQL.',
        );
    });
}

/**
 * A database a newer amil migrated (a release rolled back, or an old machine left running): this release
 * runs on it, as the release before any migration does (docs/deployment.md), and undoes nothing.
 */
function aheadOfRelease(newer: readonly string[]): string {
  return (
    `Ahead of this release: ${newer.length} migration${newer.length === 1 ? '' : 's'} applied by a newer ` +
    `amil (${newer.join(', ')}). This release runs on the schema of the release after it (each migration ` +
    'keeps the release before it working), not of later ones; nothing here undoes them.'
  );
}
