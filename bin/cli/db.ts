/** `amil db`: the database the environment selects (DATABASE_URL, else SQLite in DATA_DIR) and its migrations. */
import type { Command } from 'commander';
import { databaseStatus, migrateDatabase } from '../../core/store/admin/database.ts';
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
      const { engine, location, applied } = await migrateDatabase(cli.config());
      print(`${engine} ${location}`);
      for (const name of applied) print(`applied  ${name}`);
      print(applied.length === 0 ? 'Nothing to apply.' : `Applied ${applied.length} migrations.`);
    });

  db.command('status')
    .description('List the migrations and when each was applied; applies nothing')
    .option('--json', 'print the status as JSON')
    .action(async (opts: { json?: boolean }) => {
      const status = await databaseStatus(cli.config());
      if (opts.json) return cli.printJson(status);
      print(`${status.engine} ${status.location}`);
      for (const m of status.migrations)
        print(`${m.appliedAt ? 'applied' : 'pending'}  ${m.name}  ${m.appliedAt ?? ''}`.trimEnd());
      const pending = status.migrations.filter((m) => !m.appliedAt).length;
      print(pending === 0 ? 'Up to date.' : `${pending} pending: run amil db migrate.`);
      if (status.moved)
        print(
          `Moved to PostgreSQL (${status.moved.target}) at ${status.moved.at} by amil migrate-store: ` +
            'this file refuses writes. Set DATABASE_URL to use PostgreSQL.',
        );
    });
}
