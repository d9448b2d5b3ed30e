/** `amil worker`: a pipeline worker in this process, as `npm run worker` starts one. */
import type { Command } from 'commander';

/** Adds the `worker` command; it opens Deps of its own (the CLI's are for short commands). */
export function register(program: Command): void {
  program
    .command('worker')
    .description('Run a pipeline worker (needs REDIS_URL); the same as npm run worker')
    .action(async () => {
      // Loaded here, not on import: every other command starts without the whole pipeline (decision 257).
      const [{ runMain }, { startWorker }] = await Promise.all([
        import('../run-main.ts'),
        import('../start-worker.ts'),
      ]);
      await runMain(startWorker);
    });
}
