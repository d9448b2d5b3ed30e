/** `amil worker`: a pipeline worker in this process, as `npm run worker` starts one. */
import type { Command } from 'commander';
import { runMain } from '../run-main.ts';
import { startWorker } from '../start-worker.ts';

/** Adds the `worker` command; it opens Deps of its own (the CLI's are for short commands). */
export function register(program: Command): void {
  program
    .command('worker')
    .description('Run a pipeline worker (needs REDIS_URL); the same as npm run worker')
    .action(async () => {
      await runMain(startWorker);
    });
}
