/**
 * The CLI wired to an environment: its Deps and configuration read from `env` alone, its warnings written
 * to `stderr`. bin/amil.ts gives the process's; a test gives its own, and runs the same program in-process.
 */
import { createDeps } from '../../core/bootstrap.ts';
import { loadConfig } from '../../core/config.ts';
import type { Env } from '../../core/config/load.ts';
import { createLogger } from '../../core/logger.ts';
import type { CliOptions } from './context.ts';

export function cliEnvironment(
  env: Env,
  stderr: NodeJS.WritableStream & { write(text: string): boolean },
): Pick<CliOptions, 'openDeps' | 'loadConfig' | 'stderr'> {
  return {
    // The CLI logs warnings only, to stderr: its stdout is the command's output.
    openDeps: () => createDeps(env, { logger: createLogger('warn', stderr) }),
    loadConfig: () => loadConfig(env),
    stderr,
  };
}
