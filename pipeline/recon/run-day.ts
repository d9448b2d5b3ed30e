import { localWorkbook } from '../../core/recon-workbook.ts';
import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { sha256File } from '../../core/canonical-json.ts';
import path from 'node:path';
import { setTimeout } from 'node:timers/promises';
import type { Deps } from '../../core/deps.ts';
import { TEST_SINK, type ReconRunRow, type ReconTrigger } from '../../core/store/index.ts';
import { headline, type DaySummary } from '../../reports/reconciliation/summary.ts';
import { writeReconWorkbook } from '../../reports/reconciliation/workbook.ts';
import { compareWorkbooks } from '../../reports/reconciliation/compare.ts';
import { EXCEPTION_CODES } from '../normalise/rules.ts';

/** The pipeline has not yet ledgered everything received on the day: try again later (retryable). */
export class NotReadyError extends Error {
  override name = 'NotReadyError';
}

export interface ReconRunResult {
  run: ReconRunRow;
  summary: DaySummary;
  /** The workbook's absolute path. */
  path: string;
  /** Whom the e-mail of the run was queued to (none: a replay, `mail: false`, or no recipients). */
  mailedTo: string[];
}

/** The workbook's file name: sink, day and as-of time, so a replay of a run writes the same name. */
export function workbookName(summary: Pick<DaySummary, 'sink' | 'day' | 'asOf'>): string {
  const sink = summary.sink === TEST_SINK ? 'BANK-TEST' : summary.sink;
  const asOf = summary.asOf.replace(/[-:]/g, '').replace(/\.000Z$/, 'Z');
  return `${sink}-${summary.day}-asof-${asOf}.xlsx`;
}

/** Every sink that gets a workbook: each agency, and the bank's live tests. */
export async function reconSinks(deps: Deps): Promise<string[]> {
  const agencies = await deps.store.agencies.list();
  return [...agencies.map((a) => a.code).sort(), TEST_SINK];
}

/**
 * Reconciles one sink's business day: reads it as of `asOf` (default now) once the pipeline has caught up,
 * writes the workbook, records the run (file, SHA-256, input counts, what changed since the previous run)
 * and, unless it is a replay or `mail` is false, queues the e-mail in the same transaction.
 */
export async function runReconciliation(
  deps: Deps,
  options: { sink: string; day: string; trigger: ReconTrigger; asOf?: Date; dir?: string; mail?: boolean },
): Promise<ReconRunResult> {
  const startedAt = deps.clock.now().toISOString();
  const agency = options.sink === TEST_SINK ? undefined : await deps.store.agencies.get(options.sink);
  if (options.sink !== TEST_SINK && !agency) throw new Error(`no agency ${options.sink}`);
  const asOf = options.asOf ?? (await asOfNow(deps));
  const snapshot = await deps.store.reconSnapshot.open(options.sink, options.day, asOf);
  let file: string;
  let summary: Awaited<ReturnType<typeof writeReconWorkbook>>;
  // The snapshot is held only while the workbook is written: comparing it with the last run's and recording
  // the run need no snapshot, and on PostgreSQL an open transaction holds back vacuum and sits idle
  // (decision 263).
  try {
    const ready = await snapshot.readiness();
    if (ready.normalised < ready.received || ready.ledgered < ready.forSink) {
      throw new NotReadyError(
        `the pipeline has not caught up with ${options.day}: ${ready.received - ready.normalised} version(s) ` +
          `not normalised, ${ready.forSink - ready.ledgered} not in the ${options.sink} ledger`,
      );
    }
    const dir = options.dir ?? path.join(deps.config.recon.dir, options.day);
    mkdirSync(dir, { recursive: true });
    file = path.join(dir, workbookName({ sink: options.sink, day: options.day, asOf: asOf.toISOString() }));
    const partial = `${file}.partial`;
    summary = await writeReconWorkbook({
      snapshot,
      title: agency?.name ?? 'Bank live tests',
      explanations: EXCEPTION_CODES,
      file: partial,
    });
    renameSync(partial, file);
  } finally {
    await snapshot.close();
  }

  const previous = await deps.store.reconRuns.latest(options.sink, options.day);
  const changes = await describeChanges(deps, previous, summary, file);
  const recipients = recipientsOf(deps, agency?.settings.reportRecipients);
  const mailedTo = options.trigger !== 'replay' && options.mail !== false ? recipients : [];
  const run = await deps.store.reconRuns.record({
    sink: options.sink,
    businessDate: options.day,
    trigger: options.trigger,
    asOf: asOf.toISOString(),
    startedAt,
    finishedAt: deps.clock.now().toISOString(),
    fingerprint: summary.fingerprint,
    file: path.relative(deps.config.dataDir, file),
    localFile: file,
    fileSha256: await sha256File(file),
    fileBytes: statSync(file).size,
    inputCounts: summary.inputs,
    totals: headline(summary),
    changes,
    comparedWith: previous?.id ?? null,
    email: mailedTo.length > 0,
  });
  // Another worker recorded the night's run first: its workbook is the night's, this one is nobody's.
  if (run.file !== path.relative(deps.config.dataDir, file)) rmSync(file, { force: true });
  deps.logger.info(
    { runId: run.id, sink: run.sink, day: run.businessDate, transactions: summary.inputs.transactions },
    'reconciliation run recorded',
  );
  return { run, summary, path: file, mailedTo };
}

/** How long a run waits after its as-of time before it reads: a batch received just before has committed. */
const SETTLE_MS = 1000;

/**
 * Now, as the as-of time of a run that is not a replay, returned once SETTLE_MS have passed. A batch's
 * receipt time is taken when its request starts and it commits a few milliseconds later; reading only
 * after the wait means every batch received before the as-of time is in the snapshot, so a replay as of
 * the same instant finds exactly the same postings.
 */
export async function asOfNow(deps: Deps): Promise<Date> {
  const asOf = deps.clock.now();
  await setTimeout(SETTLE_MS);
  return asOf;
}

/** Who receives a sink's workbook: the agency's report recipients, or the bank-test recipients. */
export function recipientsOf(deps: Deps, agencyRecipients: readonly string[] | undefined): string[] {
  return [...(agencyRecipients ?? deps.config.recon.bankTestRecipients)];
}

/** How many differing cells a run's "what changed" lists. */
const CHANGES_SHOWN = 20;

async function describeChanges(
  deps: Deps,
  previous: ReconRunRow | undefined,
  summary: DaySummary,
  file: string,
): Promise<string | null> {
  if (!previous) return null;
  if (previous.fingerprint === summary.fingerprint)
    return `the same records and totals as run ${previous.id} (only the as-of time differs)`;
  const before = (await localWorkbook(deps, previous)) ?? path.resolve(deps.config.dataDir, previous.file);
  try {
    // Both the totals and the rows behind them: up to half of the lines from the Summary, the rest from
    // the other sheets (which transactions changed), so the Summary's many cells do not hide the rows.
    const diff = await compareWorkbooks(before, file, 1000);
    const isSummary = (line: string) => line.startsWith('Summary!');
    const summaryLines = diff.lines.filter(isSummary);
    const rowLines = diff.lines.filter((line) => !isSummary(line));
    const rows = rowLines.slice(0, CHANGES_SHOWN - Math.min(summaryLines.length, CHANGES_SHOWN / 2));
    const shown = [...summaryLines.slice(0, CHANGES_SHOWN - rows.length), ...rows];
    return `differs from run ${previous.id}: ${diff.count} cell(s)\n${shown.join('\n')}`;
  } catch (error) {
    return `differs from run ${previous.id} (its workbook could not be read: ${(error as Error).message})`;
  }
}
