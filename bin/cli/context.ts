/** What every command of the ops CLI is handed: the process's Deps, opened late, and where output goes. */
import { readFileSync } from 'node:fs';
import type { Config } from '../../core/config.ts';
import type { Deps } from '../../core/deps.ts';

/** How a CLI is wired to its process: the entry point gives the real ones, a test its own. */
export interface CliOptions {
  /** Opens the store and the rest; called once, by the first command that needs it (`--help` does not). */
  openDeps: () => Deps;
  /**
   * The configuration alone, for commands that must not open the store (`amil db status` reads the
   * migrations as they are). Default: the Deps' configuration.
   */
  loadConfig?: () => Config;
  /** Standard output (results) and standard error (errors, progress). Default: the process's. */
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  /** The whole of standard input (`--password-stdin`). Default: read file descriptor 0. */
  readStdin?: () => string;
}

/** The `deps` of `register(program, cli)`: one per parse. */
export interface CliContext {
  /** The Deps, opened on first use. */
  deps: () => Deps;
  /** The configuration, read without opening the store. */
  config: () => Config;
  /** Writes one line to standard output. */
  print: (line: string) => void;
  /** Writes a value as indented JSON to standard output. */
  printJson: (value: unknown) => void;
  readStdin: () => string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /**
   * An exit code a command sets without failing (a replay that differs exits 2 after printing everything);
   * undefined: 0.
   */
  exitCode: number | undefined;
  /** Closes the store if a command opened it. */
  close: () => Promise<void>;
}

/** A fresh context over the given process wiring. */
export function createCliContext(options: CliOptions): CliContext {
  let deps: Deps | undefined;
  let config: Config | undefined;
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const print = (line: string): void => {
    stdout.write(`${line}\n`);
  };
  return {
    deps: () => (deps ??= options.openDeps()),
    config: () => (config ??= deps?.config ?? options.loadConfig?.() ?? (deps = options.openDeps()).config),
    print,
    printJson: (value) => print(JSON.stringify(value, null, 2)),
    readStdin: options.readStdin ?? (() => readFileSync(0, 'utf8')),
    stdout,
    stderr,
    exitCode: undefined,
    close: async () => deps?.store.close(),
  };
}
