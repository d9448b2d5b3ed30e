/** `amil queues`: the pipeline's queues, in whichever runtime this configuration uses. */
import type { Command } from 'commander';
import { CALLBACK_QUEUE } from '../../core/queues.ts';
import type { PipelineRuntime } from '../../pipeline/runtime.ts';
import type { CliContext } from './context.ts';

/** Adds the `queues` commands. */
export function register(program: Command, cli: CliContext): void {
  const { print, printJson } = cli;
  const withRuntime = (use: (runtime: PipelineRuntime) => Promise<void>) => runtimeOf(cli, use);
  const queues = program
    .command('queues')
    .description(
      'Pipeline queues: waiting, active, failed jobs (BullMQ with REDIS_URL, else the in-process outbox)',
    )
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      await withRuntime(async (runtime) => {
        const counts = await runtime.counts();
        const failed = await runtime.failed();
        // In Redis mode the outbox shows what waits to reach Redis (e.g. while it is down).
        const outbox = await cli.deps().store.outbox.stats();
        if (opts.json) return printJson({ runtime: runtime.kind, counts, failed, outbox });
        print(`runtime: ${runtime.kind}`);
        if (runtime.kind === 'bullmq') {
          // The callbacks never go to Redis (decision 218): the workers lease them; their line counts them.
          const waiting = outbox.reduce((n, q) => n + (q.queue === CALLBACK_QUEUE ? 0 : q.waiting), 0);
          // Handed over but not completed: in Redis, or lost with it and about to be re-added (docs/pipeline.md).
          const unfinished = outbox.reduce((n, q) => n + q.unfinished, 0);
          print(
            `outbox: ${waiting} job(s) waiting to be handed to Redis, ${unfinished} handed over and not yet done`,
          );
        }
        print(
          `${'queue'.padEnd(16)}${['waiting', 'active', 'delayed', 'failed', 'completed'].map((h) => h.padStart(10)).join('')}`,
        );
        for (const c of counts) {
          print(
            `${c.queue.padEnd(16)}${[c.waiting, c.active, c.delayed, c.failed, c.completed].map((n) => String(n).padStart(10)).join('')}`,
          );
        }
        for (const f of failed)
          print(`failed ${f.queue} ${f.jobId} after ${f.attempts} attempt(s): ${f.error}`);
      });
    });

  queues
    .command('retry')
    .description('Put failed jobs back in line (of one queue, or all)')
    .argument('[queue]', 'e.g. ledger-LZS')
    .action(async (queue: string | undefined) => {
      await withRuntime(async (runtime) => {
        print(`${await runtime.retryFailed(queue)} failed job(s) put back in line.`);
      });
    });
}

/** The pipeline runtime this configuration uses, without running any job: to look and to retry. */
async function runtimeOf(cli: CliContext, use: (runtime: PipelineRuntime) => Promise<void>): Promise<void> {
  const d = cli.deps();
  // Loaded on demand, as every runtime is by the CLI: its other commands start without them (decision 257).
  const runtime = d.config.redisUrl
    ? (await import('../../pipeline/bullmq/runtime.ts')).createBullRuntime(d, {
        pollMs: 500,
        withWorkers: false,
      })
    : (await import('../../pipeline/in-process-runtime.ts')).createInProcessRuntime(d);
  try {
    await use(runtime);
  } finally {
    await runtime.stop();
  }
}
