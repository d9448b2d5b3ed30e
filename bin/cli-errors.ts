/**
 * The one way the ops CLI reports a failure: a line `amil: <what went wrong>` on stderr, and an exit code
 * a script can test: 1 when the command was understood and refused (no such agency), 2 when the command
 * line itself is wrong (unknown command, missing option, a value that cannot be right).
 */
import { CommanderError, InvalidArgumentError, type Command } from 'commander';
import { ConfigError } from '../core/config.ts';

export const EXIT_REFUSED = 1;
export const EXIT_USAGE = 2;

/** A refusal the operator can act on; its message is printed as is, without a stack. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT_REFUSED,
  ) {
    super(message);
  }
}

/**
 * Makes commander's own errors (parsing, unknown commands, a value refused by an option's parser) read
 * like every other error, and throw instead of exiting so the store is closed on the way out. Call it
 * before adding subcommands: they inherit it.
 */
export function configureErrors(program: Command): Command {
  return program
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`amil: ${text.replace(/^error: /, '')}`) })
    .showHelpAfterError('(add --help for usage)');
}

/** Prints an error thrown by a command, once, and returns the process's exit code. */
export function reportError(err: unknown, write: (text: string) => void): number {
  // Commander printed its own errors (through configureErrors) before throwing; help and --version exit 0.
  if (err instanceof CommanderError && !(err instanceof InvalidArgumentError))
    return err.exitCode === 0 ? 0 : EXIT_USAGE;
  if (err instanceof CliError) {
    write(`amil: ${err.message}\n`);
    return err.exitCode;
  }
  if (err instanceof ConfigError || err instanceof InvalidArgumentError) {
    write(`amil: ${err.message}\n`);
    return EXIT_REFUSED;
  }
  // A bug (not a refusal): its stack is what whoever fixes it needs.
  const bug = err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError;
  write(`amil: ${err instanceof Error ? err.message : String(err)}\n`);
  if (bug && err.stack) write(`${err.stack}\n`);
  return EXIT_REFUSED;
}
