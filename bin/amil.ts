/**
 * The ops CLI: `npm run amil -- <command>` (or `npx amil <command>`). The commands live in cli/, one file
 * per group; this entry point only wires them to this process: its environment, its streams.
 */
import { createDeps } from '../core/bootstrap.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { runProgram } from './cli/program.ts';

process.exitCode = await runProgram(process.argv, {
  // The CLI logs warnings only, to stderr: its stdout is the command's output.
  openDeps: () => createDeps(process.env, { logger: createLogger('warn', process.stderr) }),
  loadConfig: () => loadConfig(process.env),
});
