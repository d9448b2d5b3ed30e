/**
 * `amil export-day` and `amil replay` as the operator runs them: which day and as of when, where the bodies
 * come from (a directory, or this store's own archive), and what a replayed workbook is compared with.
 * replay.ts does the work; this file chooses its inputs, so the CLI only parses and prints.
 */
import { localWorkbook } from '../../core/recon-workbook.ts';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Deps } from '../../core/deps.ts';
import { TEST_SINK } from '../../core/store/index.ts';
import { compareWorkbooks, type WorkbookDiff } from '../../reports/reconciliation/compare.ts';
import { exportDay, readDayDir, replayDay } from './replay.ts';
import { asOfNow, type ReconRunResult } from './run-day.ts';

/** What a replay reproduces by default: the as-of time of the day's latest run (any sink), else now. */
export async function replayAsOf(deps: Deps, day: string): Promise<Date> {
  const [run] = await deps.store.reconRuns.list({ firstDay: day, lastDay: day, limit: 1 });
  return run ? new Date(run.asOf) : asOfNow(deps);
}

export interface ReplayRequest {
  day: string;
  /** An export-day directory, or a directory of webhook bodies; absent: this store's archive. */
  from?: string;
  /** Where the workbooks go. */
  outDir: string;
  /**
   * Read the day as of this instant (default: the export's; from the archive, each sink's latest run's, or
   * the day's latest run's for a sink without one, or now).
   */
  asOf?: Date;
  /** Only these sinks (default: every agency and the bank test report). */
  sinks?: readonly string[];
  /** Called with 0 done before the first body, then after each body and once more after the pipeline. */
  onProgress?: (done: number, total: number) => void;
}

/** Replays a day in an isolated store and returns its workbooks, each as of the instant it was read. */
export async function replayFrom(deps: Deps, request: ReplayRequest): Promise<ReconRunResult[]> {
  const agencies = (await deps.store.agencies.list()).map((a) => ({
    code: a.code,
    name: a.name,
    settings: a.settings,
  }));
  const replay = async (from: string, asOf: Date | undefined, only: readonly string[] | undefined) => {
    const archive = readDayDir(from, request.day, { asOf, agencies });
    request.onProgress?.(0, archive.batches.length + 1);
    return replayDay(deps, archive, { outDir: request.outDir, sinks: only, onProgress: request.onProgress });
  };
  // From files: the sinks are the archive's agencies (this store may have none, or others).
  if (request.from !== undefined) return replay(request.from, request.asOf, request.sinks);
  const sinks = request.sinks ?? [...agencies.map((a) => a.code).sort(), TEST_SINK];
  // From the archive: each sink as of the workbook it last emitted. One agency re-run by hand after the
  // night has a later run than the others; one instant for all would leave theirs with no original.
  const passes = request.asOf
    ? new Map([[request.asOf.toISOString(), sinks]])
    : await latestRunOf(deps, request.day, sinks);
  const results: ReconRunResult[] = [];
  for (const [asOf, only] of passes) {
    const scratch = mkdtempSync(path.join(tmpdir(), 'amil-export-'));
    try {
      await exportDay(deps, request.day, new Date(asOf), scratch);
      results.push(...(await replay(scratch, undefined, only)));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  return sinks.flatMap((sink) => results.filter((r) => r.run.sink === sink));
}

/** The sinks grouped by the as-of of their latest run of the day (the day's latest run's, else now, if none). */
async function latestRunOf(
  deps: Deps,
  day: string,
  sinks: readonly string[],
): Promise<Map<string, string[]>> {
  const passes = new Map<string, string[]>();
  let fallback: string | undefined;
  for (const sink of sinks) {
    const asOf =
      (await deps.store.reconRuns.latest(sink, day))?.asOf ??
      (fallback ??= (await replayAsOf(deps, day)).toISOString());
    passes.set(asOf, [...(passes.get(asOf) ?? []), sink]);
  }
  return passes;
}

/**
 * Compares a replayed workbook cell by cell with its original: the file of the same name in `dir`, or
 * (no dir) the workbook this store's own run of the sink's day emitted as of the same instant. Undefined
 * when there is no original to compare with.
 */
export async function compareWithOriginal(
  deps: Deps,
  replayed: ReconRunResult,
  against: { day: string; dir?: string },
): Promise<WorkbookDiff | undefined> {
  const original =
    against.dir !== undefined
      ? path.join(against.dir, path.basename(replayed.path))
      : await originalOf(deps, replayed.run.sink, against.day, replayed.run.asOf);
  if (!original || !existsSync(original)) return undefined;
  return compareWorkbooks(original, replayed.path, 50);
}

/** The workbook a run of this store emitted for the sink's day as of that instant. */
async function originalOf(deps: Deps, sink: string, day: string, asOf: string): Promise<string | undefined> {
  const runs = await deps.store.reconRuns.list({ sink, firstDay: day, lastDay: day, limit: 100 });
  const run = runs.find((r) => r.asOf === asOf && r.trigger !== 'replay');
  return run && localWorkbook(deps, run);
}
