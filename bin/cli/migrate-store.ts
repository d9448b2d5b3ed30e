/** `amil migrate-store`: an embedded installation's SQLite file moved into PostgreSQL, verified table by table. */
import { InvalidArgumentError, type Command } from 'commander';
import { migrateStore } from '../../core/store/sqlite/migrate-store.ts';
import { redactDatabaseUrl } from '../../core/store/pg/pool.ts';
import type { CliContext } from './context.ts';

const sqliteSource = (value: string): string => {
  const file = value.startsWith('sqlite:') ? value.slice('sqlite:'.length) : '';
  if (file === '') throw new InvalidArgumentError('--from looks like sqlite:/var/lib/amil/amil.db');
  return file;
};

const postgresTarget = (value: string): string => {
  if (!/^postgres(ql)?:\/\/\S+$/.test(value))
    throw new InvalidArgumentError('--to looks like postgres://user:password@host:5432/amil');
  return value;
};

/** Adds the `migrate-store` command. */
export function register(program: Command, cli: CliContext): void {
  const { print } = cli;
  program
    .command('migrate-store')
    .description(
      'Copy a SQLite store into an empty PostgreSQL database; commits only if every table reads back the same',
    )
    .requiredOption('--from <sqlite:FILE>', 'the SQLite file, e.g. sqlite:./data/amil.db', sqliteSource)
    .requiredOption(
      '--to <url>',
      'the PostgreSQL database, postgres://user:password@host:5432/amil',
      postgresTarget,
    )
    .action(async (opts: { from: string; to: string }) => {
      print(`Copying ${opts.from} into ${redactDatabaseUrl(opts.to)} ...`);
      const copies = await migrateStore(opts.from, opts.to);
      for (const c of copies)
        print(
          `${c.table.padEnd(24)} ${String(c.rows).padStart(10)} rows  sha256 ${c.checksum.slice(0, 16)}  same`,
        );
      const rows = copies.reduce((n, c) => n + c.rows, 0);
      print(
        `Copied ${rows} rows in ${copies.length} tables; counts and checksums match. Set DATABASE_URL to use it.`,
      );
    });
}
