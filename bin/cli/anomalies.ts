/** `amil anomalies`: bank records that contradicted what was stored. */
import { InvalidArgumentError, type Command } from 'commander';
import { CliError } from '../cli-errors.ts';
import type { CliContext } from './context.ts';

/** Adds the `anomalies` commands. */
export function register(program: Command, cli: CliContext): void {
  const { print, printJson } = cli;
  const anomalies = program
    .command('anomalies')
    .description('Bank records that contradicted what was stored');

  anomalies
    .command('list')
    .description('List anomalies (default: open ones)')
    .option('--status <status>', 'open, resolved or all', 'open')
    .option('--day <YYYY-MM-DD>', 'business day the anomaly was received on')
    .option('--json', 'machine-readable output, with both versions')
    .action(async (opts: { status: string; day?: string; json?: boolean }) => {
      if (!['open', 'resolved', 'all'].includes(opts.status)) {
        throw new InvalidArgumentError('--status is open, resolved or all');
      }
      const rows = await cli.deps().store.anomalies.list({
        ...(opts.status !== 'all' && { status: opts.status as 'open' | 'resolved' }),
        ...(opts.day !== undefined && { businessDate: opts.day }),
      });
      if (opts.json) {
        return printJson(
          rows.map((r) => ({
            ...r,
            storedRecord: JSON.parse(r.storedRecord) as unknown,
            incomingRecord: JSON.parse(r.incomingRecord) as unknown,
          })),
        );
      }
      if (rows.length === 0) return print(`No ${opts.status === 'all' ? '' : `${opts.status} `}anomalies.`);
      for (const r of rows) {
        print(`${r.id}  ${r.status.padEnd(8)} ${r.orderno}  seen ${r.seenCount}x, first ${r.firstSeenAt}`);
        print(`  ${r.reason}`);
        print(`  stored v${r.storedVersion}: ${r.storedRecord}`);
        print(`  incoming:  ${r.incomingRecord}`);
        if (r.resolutionNote) print(`  resolved ${r.resolvedAt}: ${r.resolutionNote}`);
      }
    });

  anomalies
    .command('resolve')
    .description('Mark an anomaly resolved, with a note saying what was done')
    .argument('<id>', 'anomaly id (anm_...)')
    .requiredOption(
      '--note <text>',
      'what was decided, e.g. "bank confirmed the success; failed resent in error"',
    )
    .action(async (id: string, opts: { note: string }) => {
      const { store, clock } = cli.deps();
      if (!(await store.anomalies.resolve(id, opts.note, clock.now())))
        throw new CliError(`no open anomaly ${id}`);
      print(`Anomaly ${id} resolved.`);
    });
}
