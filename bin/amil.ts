/**
 * The ops CLI: `npm run amil -- <command>` (or `npx amil <command>`). The commands live in cli/, one file
 * per group; this entry point only wires them to this process: its environment, its streams.
 */
import { cliEnvironment } from './cli/environment.ts';
import { runProgram } from './cli/program.ts';

process.exitCode = await runProgram(process.argv, cliEnvironment(process.env, process.stderr));
