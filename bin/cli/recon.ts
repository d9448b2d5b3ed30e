/** `amil recon`: the nightly reconciliation workbooks, run by hand and listed. */
import { InvalidArgumentError, type Command } from 'commander';
import { formatSen } from '../../core/money.ts';
import { TEST_SINK } from '../../core/store/index.ts';
import { CliError } from '../cli-errors.ts';
import { day, pastDay, sinkName, sinkOf } from './args.ts';
import type { CliContext } from './context.ts';

/** Adds the `recon` commands. */
export function register(program: Command, cli: CliContext): void {
  const { print, printJson } = cli;
  const recon = program
    .command('recon')
    .description('Nightly reconciliation workbooks: run a day by hand, list the runs');

  recon
    .command('run')
    .description(
      'Build the workbooks of one business day now (every agency and the bank test report, or one), record ' +
        'the run, report what changed since the previous run of that day, and queue the e-mails (unless --no-mail)',
    )
    .requiredOption('--day <day>', 'a business day already over, YYYY-MM-DD (Asia/Kuala_Lumpur)', pastDay)
    .option('--agency <code>', 'one agency (or BANK-TEST for the bank live-test report)')
    .option('--no-mail', 'record the run without e-mailing the workbook')
    .action(async (opts: { day: string; agency?: string; mail: boolean }) => {
      const d = cli.deps();
      // The workbook writer (exceljs) loads only for the command that writes one (decision 257).
      const { asOfNow, reconSinks, runReconciliation } = await import('../../pipeline/recon/run-day.ts');
      const sinks = opts.agency ? [sinkOf(opts.agency)] : await reconSinks(d);
      for (const sink of sinks)
        if (sink !== TEST_SINK && !(await d.store.agencies.get(sink)))
          throw new CliError(`no agency ${sink}`);
      const asOf = await asOfNow(d);
      for (const sink of sinks) {
        const {
          run,
          summary,
          path: file,
          mailedTo,
        } = await runReconciliation(d, {
          sink,
          day: opts.day,
          trigger: 'manual',
          asOf,
          mail: opts.mail,
        });
        print(
          `run ${run.id} ${sinkName(sink)} ${opts.day}: ${summary.inputs.transactions} transaction(s), ` +
            `collected RM ${formatSen(summary.byStatus.success.sumSen)}, pending roll ${summary.pending.balances ? 'balances' : 'DOES NOT BALANCE'}`,
        );
        print(`  ${file}`);
        print(`  sha256 ${run.fileSha256}`);
        if (run.changes) print(`  ${run.changes.split('\n').join('\n  ')}`);
        print(`  ${mailText(sink, opts.mail, mailedTo)}`);
      }
    });

  recon
    .command('remail')
    .description(
      "E-mail a run's workbook again to the current recipients (queued through the outbox; the pipeline " +
        'sends it once), as the dashboard\'s "E-mail this workbook again" does',
    )
    .argument('<runId>', 'the run (amil recon list)', (v) => {
      if (!/^\d{1,12}$/.test(v)) throw new InvalidArgumentError('a run id is a whole number');
      return Number(v);
    })
    .action(async (runId: number) => {
      const d = cli.deps();
      const run = await d.store.reconRuns.get(runId);
      if (!run) throw new CliError(`no reconciliation run ${runId}`);
      await d.store.reconRuns.requestRemail(run.id, d.clock.now().toISOString());
      print(`run ${run.id} ${sinkName(run.sink)} ${run.businessDate}: e-mail queued again`);
    });

  recon
    .command('list')
    .description('Reconciliation runs, newest day first, with their e-mail deliveries')
    .option('--day <day>', 'only this business day', day)
    .option('--agency <code>', 'only this agency (or BANK-TEST)')
    .option('--limit <n>', 'at most this many', (v) => Number.parseInt(v, 10), 50)
    .option('--json', 'print JSON')
    .action(async (opts: { day?: string; agency?: string; limit: number; json?: boolean }) => {
      const { store } = cli.deps();
      const runs = await store.reconRuns.list({
        sink: opts.agency ? sinkOf(opts.agency) : undefined,
        firstDay: opts.day,
        lastDay: opts.day,
        limit: opts.limit,
      });
      const withDeliveries = await Promise.all(
        runs.map(async (run) => ({
          ...run,
          emailQueued: await store.reconRuns.emailQueued(run.id),
          deliveries: await store.reconRuns.deliveries(run.id),
        })),
      );
      if (opts.json) return printJson(withDeliveries);
      for (const run of withDeliveries) {
        const sent = run.deliveries.find((x) => x.outcome === 'sent');
        const mail = sent
          ? `mailed ${sent.at}`
          : run.deliveries.length > 0
            ? `${run.deliveries.length} failed attempt(s)`
            : run.trigger === 'replay'
              ? 'replays are not mailed'
              : run.sink === TEST_SINK && cli.deps().config.recon.bankTestRecipients.length === 0
                ? 'not mailed: no BANK_TEST_RECIPIENTS'
                : run.emailQueued
                  ? 'not mailed yet'
                  : 'not mailed: no e-mail queued (--no-mail, or no recipients)';
        print(`${run.id}\t${run.businessDate}\t${sinkName(run.sink)}\t${run.trigger}\t${run.file}\t${mail}`);
      }
    });
}

/** Whether a run was mailed: the e-mail is queued with the run and sent by the pipeline. */
function mailText(sink: string, mail: boolean, mailedTo: readonly string[]): string {
  if (!mail) return 'not mailed (--no-mail)';
  if (mailedTo.length > 0) return `e-mail queued to ${mailedTo.join(', ')}`;
  return sink === TEST_SINK
    ? 'not mailed: no recipients (BANK_TEST_RECIPIENTS)'
    : `not mailed: no recipients (amil agency set ${sink} --recipients ...)`;
}
