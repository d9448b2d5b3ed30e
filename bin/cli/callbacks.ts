/** `amil callbacks`: direct callbacks to merchants and their deliveries. */
import { InvalidArgumentError, type Command } from 'commander';
import { CALLBACK_QUEUE } from '../../core/queues.ts';
import { CliError } from '../cli-errors.ts';
import type { CliContext } from './context.ts';

/** Adds the `callbacks` commands. */
export function register(program: Command, cli: CliContext): void {
  const { print, printJson } = cli;
  const callbacks = program
    .command('callbacks')
    .description('Direct callbacks to merchants and their deliveries');

  callbacks
    .command('list')
    .description('List callbacks, newest first, with their last attempt')
    .option(
      '--failed',
      'only the failing: still retrying after a failed attempt, given up (dead), or refused by the merchant (410)',
    )
    .option('--limit <n>', 'how many', '50')
    .option('--json', 'machine-readable output, with every attempt')
    .action(async (opts: { failed?: boolean; limit: string; json?: boolean }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
        throw new InvalidArgumentError('--limit is a whole number from 1 to 10000');
      }
      const store = cli.deps().store;
      const rows = await store.callbacks.list({ failed: opts.failed === true, limit });
      const withAttempts = await Promise.all(
        rows.map(async (r) => ({
          ...r,
          attempts: (await store.callbacks.ofOrder(r.orderNo)).find((c) => c.id === r.id)?.attemptLog ?? [],
        })),
      );
      if (opts.json) return printJson(withAttempts.map(({ fields: _fields, ...r }) => r));
      if (rows.length === 0) return print(opts.failed ? 'No failed callbacks.' : 'No callbacks.');
      for (const r of withAttempts) {
        const last = r.attempts.at(-1);
        const lastText = last ? `last ${last.at} ${last.statusCode ?? last.error ?? ''}` : 'not tried yet';
        // Queued after a failed attempt: failing now, and tried again at its next attempt.
        const retrying = r.state === 'queued' && r.attempts.length > 0;
        const state = retrying ? 'retrying' : r.state;
        const nextText = retrying && r.nextAttemptAt ? `, next ${r.nextAttemptAt}` : '';
        print(
          `${r.orderNo}  ${r.agencyCode.padEnd(5)} ${r.status.padEnd(8)} ${state.padEnd(10)} ${r.attempts.length} attempt(s), ${lastText}${nextText}`,
        );
        print(`  ${r.url}`);
      }
    });

  callbacks
    .command('redeliver')
    .description("Send an order's latest callback again (a new callback; the old one keeps its history)")
    .argument('<orderNo>', 'service order number (fpx_seller_order_no)')
    .action(async (orderNo: string) => {
      const deps = cli.deps();
      const id = await deps.store.callbacks.redeliver(orderNo, deps.clock.now().toISOString());
      if (id === undefined) throw new CliError(`order ${orderNo} has no callback to send again`);
      // Redis mode: the workers hear of it now rather than at their next look at the outbox.
      if (deps.config.redisUrl)
        await (await import('../../pipeline/bullmq/wakes.ts')).publishWakeOnce(deps, [CALLBACK_QUEUE]);
      print(
        `Callback ${id} of ${orderNo} queued; the pipeline delivers it (embedded: the web process; Redis: the workers).`,
      );
    });
}
