/**
 * The ops CLI as a commander program, built on demand: nothing parses on import, so a test builds it with
 * a temporary DATA_DIR and its own output streams, and runs commands in its own process.
 */
import { Command } from 'commander';
import { version } from '../../core/version.ts';
import { configureErrors, reportError } from '../cli-errors.ts';
import { createCliContext, type CliContext, type CliOptions } from './context.ts';
import { register as agency } from './agency.ts';
import { register as anomalies } from './anomalies.ts';
import { register as callbacks } from './callbacks.ts';
import { register as db } from './db.ts';
import { register as migrateStore } from './migrate-store.ts';
import { register as partner } from './partner.ts';
import { register as queues } from './queues.ts';
import { register as recon } from './recon.ts';
import { register as replay } from './replay.ts';
import { register as token } from './token.ts';
import { register as worker } from './worker.ts';

/** The `amil` program: every command group registered over one context (its Deps, its output). */
export function buildProgram(cli: CliContext): Command {
  const program = configureErrors(new Command('amil'))
    // Before any subcommand is added: they inherit the output, as they inherit the error handling.
    .configureOutput({
      writeOut: (text) => cli.stdout.write(text),
      writeErr: (text) => cli.stderr.write(text),
    })
    .description(
      'Operate amil: partners, agencies and keys, report tokens, anomalies, pipeline queues and workers, the database',
    )
    .version(version, '-V, --version', 'print the version of amil');
  // The order commands are listed in by --help.
  partner(program, cli);
  anomalies(program, cli);
  agency(program, cli);
  callbacks(program, cli);
  token(program, cli);
  worker(program);
  queues(program, cli);
  recon(program, cli);
  replay(program, cli);
  db(program, cli);
  migrateStore(program, cli);
  return program;
}

/**
 * Runs one command line (`argv` as in process.argv, or only the user's arguments with `from: 'user'`),
 * prints any error through the one error printer, closes the store, and returns the exit code.
 */
export async function runProgram(
  argv: readonly string[],
  options: CliOptions & { from?: 'node' | 'user' },
): Promise<number> {
  const cli = createCliContext(options);
  try {
    await buildProgram(cli).parseAsync(argv, { from: options.from ?? 'node' });
    return cli.exitCode ?? 0;
  } catch (err) {
    return reportError(err, (text) => cli.stderr.write(text));
  } finally {
    await cli.close();
  }
}
