/**
 * `amil migrate-store`: an embedded installation's SQLite file and workbooks moved into PostgreSQL, verified
 * table by table and workbook by workbook.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { migrateStore, reopenMovedStore } from '../../core/store/sqlite/migrate-store.ts';
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

interface MigrateStoreOptions {
  from: string;
  to?: string;
  dataDir?: string;
  allowMissingWorkbooks?: boolean;
  reopen?: boolean;
}

/** Adds the `migrate-store` command. */
export function register(program: Command, cli: CliContext): void {
  const { print } = cli;
  program
    .command('migrate-store')
    .description(
      'Copy a SQLite store and its workbooks into an empty PostgreSQL database; commits only if every table and workbook reads back the same',
    )
    .requiredOption('--from <sqlite:FILE>', 'the SQLite file, e.g. sqlite:./data/amil.db', sqliteSource)
    .option('--to <url>', 'the PostgreSQL database, postgres://user:password@host:5432/amil', postgresTarget)
    .option(
      '--data-dir <dir>',
      "where the runs' workbooks are: the installation's DATA_DIR (default: the folder of the SQLite file)",
    )
    .option(
      '--allow-missing-workbooks',
      'move the runs whose workbook is missing or differs from its SHA-256 without it, instead of refusing',
    )
    .option(
      '--reopen',
      'instead of copying: lift the mark of an earlier move from the SQLite file, so it can be written again',
    )
    .addHelpText(
      'after',
      '\nStop every process using the SQLite file first. Once PostgreSQL has committed the copy, the file is ' +
        'marked moved: it refuses every write, and a server started on it refuses to start (--reopen undoes that).',
    )
    .action(async (opts: MigrateStoreOptions) => {
      if (opts.reopen) {
        const lifted = reopenMovedStore(opts.from);
        print(
          lifted
            ? `${opts.from} can be written again. Writes made to PostgreSQL since the move are not in it.`
            : `${opts.from} was not marked moved: nothing to do.`,
        );
        return;
      }
      if (!opts.to) throw new InvalidArgumentError('--to postgres://... is required (or --reopen)');
      print(`Copying ${opts.from} into ${redactDatabaseUrl(opts.to)} ...`);
      const copy = await migrateStore(opts.from, opts.to, {
        dataDir: opts.dataDir,
        allowMissingWorkbooks: opts.allowMissingWorkbooks,
      });
      for (const c of copy.tables)
        print(
          `${c.table.padEnd(24)} ${String(c.rows).padStart(10)} rows  sha256 ${c.checksum.slice(0, 16)}  same`,
        );
      for (const w of copy.workbooks)
        print(
          `${`workbook of run ${w.runId}`.padEnd(24)} ${String(w.bytes).padStart(10)} bytes sha256 ${w.sha256.slice(0, 16)}  same`,
        );
      for (const m of copy.leftOut)
        print(`${`workbook of run ${m.runId}`.padEnd(24)} left out: ${m.file} ${m.problem}`);
      const rows = copy.tables.reduce((n, c) => n + c.rows, 0);
      const bytes = copy.workbooks.reduce((n, w) => n + w.bytes, 0);
      if (copy.alreadyCopied)
        print(
          `PostgreSQL already holds this store: an earlier move committed it and stopped before marking the ` +
            `file. Nothing copied; ${rows} rows in ${copy.tables.length} tables and ${copy.workbooks.length} ` +
            `workbooks (${bytes} bytes) compared, counts and checksums match. Set DATABASE_URL to use it.`,
        );
      else
        print(
          `Copied ${rows} rows in ${copy.tables.length} tables and ${copy.workbooks.length} workbooks ` +
            `(${bytes} bytes); counts and checksums match. Set DATABASE_URL to use it.`,
        );
      print(
        copy.sourceMarked
          ? `${opts.from} is marked moved: it refuses writes from now on (--reopen lifts that).`
          : `WARNING: ${opts.from} could not be marked moved (${copy.markError}): make sure no process writes it.`,
      );
      if (copy.leftOut.length > 0)
        print(
          `${copy.leftOut.length} runs moved without their workbooks (--allow-missing-workbooks): ` +
            'their downloads answer that the workbook is no longer kept.',
        );
    });
}
