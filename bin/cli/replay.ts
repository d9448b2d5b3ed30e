/** `amil export-day` and `amil replay`: a day as fixture files, and the whole pipeline run on it again. */
import path from 'node:path';
import { Presets, SingleBar } from 'cli-progress';
import { InvalidArgumentError, type Command } from 'commander';
import { day, instant, sinkOf } from './args.ts';
import type { CliContext } from './context.ts';

/** Adds the `export-day` and `replay` commands. */
export function register(program: Command, cli: CliContext): void {
  const { print } = cli;
  program
    .command('export-day')
    .description(
      "Write what a replay of a business day needs as fixture files: the day's archived webhook bodies " +
        '(verbatim), excerpts of earlier bodies for the postings the day shows, and the checkout payments',
    )
    .requiredOption('--day <day>', 'business day, YYYY-MM-DD (Asia/Kuala_Lumpur)', day)
    .requiredOption('--out <dir>', 'directory to write (manifest.json, batches/, payments.json)')
    .option(
      '--as-of <instant>',
      "read as of this instant (default: the latest run of the day's, else now)",
      instant,
    )
    .action(async (opts: { day: string; out: string; asOf?: Date }) => {
      const d = cli.deps();
      // The pipeline loads only for the commands that run it (decision 257).
      const [{ exportDay }, { replayAsOf }] = await Promise.all([
        import('../../pipeline/recon/replay.ts'),
        import('../../pipeline/recon/replay-run.ts'),
      ]);
      const manifest = await exportDay(d, opts.day, opts.asOf ?? (await replayAsOf(d, opts.day)), opts.out);
      print(
        `${opts.out}: ${manifest.batches.length} bodies (${manifest.batches.filter((b) => b.excerpt).length} excerpts), ` +
          `as of ${manifest.asOf}`,
      );
    });

  program
    .command('replay')
    .description(
      'Run the whole pipeline on a day in an isolated store (ingest, normalise, fan-out, workbooks) and write ' +
        'its workbooks; --compare checks them cell by cell against the ones the original run emitted',
    )
    .requiredOption('--day <day>', 'business day, YYYY-MM-DD (Asia/Kuala_Lumpur)', day)
    .option(
      '--from <dir>',
      'an export-day directory, or a directory of webhook bodies (e.g. fixtures/days/2026-11-20)',
    )
    .option('--from-archive', "this store's archive (as of the day's latest run)")
    .requiredOption('--out <dir>', 'where to write the workbooks')
    .option('--as-of <instant>', 'read the day as of this instant', instant)
    .option('--agency <code>', 'one agency (or BANK-TEST)')
    .option('--compare [dir]', "compare with the workbooks in dir (default: this store's runs of the day)")
    .action(async (opts: ReplayOptions) => {
      if (Boolean(opts.from) === Boolean(opts.fromArchive))
        throw new InvalidArgumentError('give --from <dir> or --from-archive');
      await replay(cli, opts);
    });
}

interface ReplayOptions {
  day: string;
  from?: string;
  fromArchive?: boolean;
  out: string;
  asOf?: Date;
  agency?: string;
  compare?: string | boolean;
}

/** Replays with a progress bar on stderr, prints each workbook and its comparison; exit code 2 if any differs. */
async function replay(cli: CliContext, opts: ReplayOptions): Promise<void> {
  const { print } = cli;
  const d = cli.deps();
  const { compareWithOriginal, replayFrom } = await import('../../pipeline/recon/replay-run.ts');
  const bar = new SingleBar(
    { format: 'replay {bar} {value}/{total} {stage}', stream: cli.stderr },
    Presets.shades_classic,
  );
  try {
    const results = await replayFrom(d, {
      day: opts.day,
      ...(opts.from !== undefined && { from: opts.from }),
      outDir: opts.out,
      ...(opts.asOf !== undefined && { asOf: opts.asOf }),
      ...(opts.agency !== undefined && { sinks: [sinkOf(opts.agency)] }),
      onProgress: (done, total) => {
        if (done === 0) bar.start(total, 0, { stage: 'ingest' });
        else bar.update(done, { stage: done < total ? 'ingest' : 'workbooks' });
      },
    });
    bar.stop();
    let differs = false;
    for (const result of results) {
      print(`${path.basename(result.path)}  sha256 ${result.run.fileSha256}`);
      if (opts.compare === undefined) continue;
      const diff = await compareWithOriginal(d, result, {
        day: opts.day,
        ...(typeof opts.compare === 'string' && { dir: opts.compare }),
      });
      if (!diff) {
        print('  no original workbook to compare with');
        differs = true;
      } else if (diff.identical) print('  identical');
      else {
        differs = true;
        print(`  differs: ${diff.count} cell(s)`);
        for (const line of diff.lines) print(`    ${line}`);
      }
    }
    if (differs) cli.exitCode = 2;
  } finally {
    bar.stop();
  }
}
