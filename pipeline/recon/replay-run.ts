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
  /** Read the day as of this instant (default: the export's, or the day's latest run, or now). */
  asOf?: Date;
  /** Only these sinks (default: every agency and the bank test report). */
  sinks?: readonly string[];
  /** Called with 0 done before the first body, then after each body and once more after the pipeline. */
  onProgress?: (done: number, total: number) => void;
}

/** Replays a day in an isolated store and returns its workbooks, and the instant the day was read as of. */
export async function replayFrom(
  deps: Deps,
  request: ReplayRequest,
): Promise<{ asOf: Date; results: ReconRunResult[] }> {
  const agencies = (await deps.store.agencies.list()).map((a) => ({
    code: a.code,
    name: a.name,
    settings: a.settings,
  }));
  let scratch: string | undefined;
  try {
    let from = request.from;
    if (from === undefined) {
      const asOf = request.asOf ?? (await replayAsOf(deps, request.day));
      scratch = mkdtempSync(path.join(tmpdir(), 'amil-export-'));
      await exportDay(deps, request.day, asOf, scratch);
      from = scratch;
    }
    const archive = readDayDir(from, request.day, { asOf: request.asOf, agencies });
    request.onProgress?.(0, archive.batches.length + 1);
    const results = await replayDay(deps, archive, {
      outDir: request.outDir,
      sinks: request.sinks,
      onProgress: request.onProgress,
    });
    return { asOf: archive.asOf, results };
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Compares a replayed workbook cell by cell with its original: the file of the same name in `dir`, or
 * (no dir) the workbook this store's own run of the sink's day emitted as of the same instant. Undefined
 * when there is no original to compare with.
 */
export async function compareWithOriginal(
  deps: Deps,
  replayed: ReconRunResult,
  against: { day: string; asOf: Date; dir?: string },
): Promise<WorkbookDiff | undefined> {
  const original =
    against.dir !== undefined
      ? path.join(against.dir, path.basename(replayed.path))
      : await originalOf(deps, replayed.run.sink, against.day, against.asOf);
  if (!original || !existsSync(original)) return undefined;
  return compareWorkbooks(original, replayed.path, 50);
}

/** The workbook a run of this store emitted for the sink's day as of that instant. */
async function originalOf(deps: Deps, sink: string, day: string, asOf: Date): Promise<string | undefined> {
  const runs = await deps.store.reconRuns.list({ sink, firstDay: day, lastDay: day, limit: 100 });
  const run = runs.find((r) => r.asOf === asOf.toISOString() && r.trigger !== 'replay');
  return run && localWorkbook(deps, run);
}
