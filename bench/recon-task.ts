/**
 * One measured task of the reconciliation benchmark, run in a child process of its own (bench/recon.ts forks
 * this file) so that its peak RSS is its own: `process.resourceUsage().maxRSS` when the task ends. Every task
 * loads the same modules (the static imports below), so they start from the same floor.
 *
 *   floor     nothing: the RSS of a process with these modules loaded
 *   ours      runReconciliation(deps, { sink, day, trigger: 'manual', asOf, dir }) end to end
 *   baseline  exceljs's streaming WorkbookWriter, one sheet, the same number of rows and columns as the
 *             Transactions sheet, plain values (no styles, no shared strings), read with one plain SELECT
 *             from normalised_postings, yielding to the event loop every 2,000 rows as ours does
 *   drained   the same, also waiting at each yield until the zip has taken in what the sheet wrote (see
 *             zipBacklog): what exceljs's streaming writer needs for flat memory
 *   phases    `ours` again with its snapshot's reads timed (which sheet or pass consumes what), then each
 *             piece alone: the transactions read, the summary pass, the plain SELECT
 *
 * The result goes back to the parent over IPC.
 */
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import ExcelJS from 'exceljs';
import { createDeps } from '../core/bootstrap.ts';
import type { ReconSnapshot } from '../core/store/index.ts';
import { runReconciliation } from '../pipeline/recon/run-day.ts';
import { summarise } from '../reports/reconciliation/summary.ts';

export type TaskName = 'floor' | 'ours' | 'baseline' | 'drained' | 'phases';

export interface TaskInput {
  task: TaskName;
  dataDir: string;
  outDir: string;
  sink: string;
  day: string;
  asOf: string;
}

/** A read of the snapshot as the run consumed it: when it was asked for, when it ran out, rows given. */
export interface ReadSpan {
  read: string;
  startMs: number;
  endMs: number;
  rows: number;
}

export interface TaskResult {
  task: TaskName;
  /** Wall time of the measured call. */
  ms: number;
  /** Peak resident set of the whole child process, bytes. */
  maxRssBytes: number;
  /** Peaks seen by sampling every 100 ms (event-loop turns permitting), bytes. */
  sampled: { rss: number; heapUsed: number; external: number };
  /** Rows written to the main sheet. */
  rows: number;
  fileBytes: number;
  cpuMs: number;
  /** ours: what the summary counted. */
  inputs?: Record<string, number>;
  balances?: boolean;
  /** phases: the run's reads in order, and the pieces timed alone. */
  spans?: ReadSpan[];
  alone?: { label: string; ms: number; rows: number }[];
}

/** The Transactions sheet's 18 columns, as plain values straight from the table. */
const BASELINE_SELECT = `SELECT orderno, time_utc, bank_agency, name, email, ic_no, phone, type_raw, type, state, year,
  amount_sen, zakat_amount_sen, rate_sen, dependants, status, version, exceptions
  FROM normalised_postings WHERE sink = ? AND business_date = ? AND version = 1`;
/** Rows between yields to the event loop: what writeReconWorkbook does, so the zip stream can drain. */
const YIELD_EVERY = 2000;

function countRows(rows: Iterable<unknown>): number {
  const iterator = rows[Symbol.iterator]();
  let n = 0;
  while (!iterator.next().done) n += 1;
  return n;
}

async function countRowsAsync(rows: AsyncIterable<unknown>): Promise<number> {
  const iterator = rows[Symbol.asyncIterator]();
  let n = 0;
  while (!(await iterator.next()).done) n += 1;
  return n;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

function sampler() {
  const peak = { rss: 0, heapUsed: 0, external: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
    peak.external = Math.max(peak.external, m.external + m.arrayBuffers);
  };
  const timer = setInterval(sample, 100);
  return () => {
    clearInterval(timer);
    sample();
    return peak;
  };
}

function depsFor(input: TaskInput) {
  return createDeps({ DATA_DIR: input.dataDir, LOG_LEVEL: 'silent', SEED_DEMO: 'false' });
}

async function ours(
  input: TaskInput,
): Promise<Omit<TaskResult, 'task' | 'maxRssBytes' | 'sampled' | 'cpuMs'>> {
  const deps = depsFor(input);
  const t0 = performance.now();
  const result = await runReconciliation(deps, {
    sink: input.sink,
    day: input.day,
    trigger: 'manual',
    asOf: new Date(input.asOf),
    dir: input.outDir,
  });
  const ms = performance.now() - t0;
  await deps.store.close();
  return {
    ms,
    rows: result.summary.inputs.transactions,
    fileBytes: result.run.fileBytes,
    inputs: result.summary.inputs,
    balances: result.summary.pending.balances,
  };
}

/** Past this many bytes waiting to be zipped, the drained baseline waits for the zip. */
const DRAIN_ABOVE_BYTES = 4 * 1024 * 1024;

type PipeTarget = {
  _writableState?: { length: number };
  once(event: 'drain', listener: () => void): unknown;
};

/**
 * exceljs's sheet stream (StreamBuf) writes into the zip without heeding backpressure: archiver wraps it
 * in a PassThrough whose write buffer holds whatever deflate has not taken yet. Deflate moves on only as the
 * event loop turns, so a writer that just yields (setImmediate every 2,000 rows) outruns it and nearly the
 * whole uncompressed sheet piles up there. Resolves once that buffer is below the bound.
 */
async function zipBacklog(sheet: ExcelJS.Worksheet): Promise<void> {
  const pipe = (sheet as unknown as { stream: { pipes: PipeTarget[] } }).stream.pipes[0];
  const waiting = pipe?._writableState?.length ?? 0;
  if (pipe && waiting > DRAIN_ABOVE_BYTES) await new Promise<void>((resolve) => pipe.once('drain', resolve));
}

async function baseline(
  input: TaskInput,
  drained = false,
): Promise<Omit<TaskResult, 'task' | 'maxRssBytes' | 'sampled' | 'cpuMs'>> {
  const file = path.join(input.outDir, 'baseline.xlsx');
  const t0 = performance.now();
  const db = new Database(path.join(input.dataDir, 'amil.db'), { readonly: true, fileMustExist: true });
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: file,
    useStyles: false,
    useSharedStrings: false,
  });
  const sheet = workbook.addWorksheet('Transactions');
  let rows = 0;
  for (const values of db.prepare(BASELINE_SELECT).raw(true).iterate(input.sink, input.day)) {
    sheet.addRow(values).commit();
    rows += 1;
    if (rows % YIELD_EVERY === 0) {
      await turn();
      if (drained) await zipBacklog(sheet);
    }
  }
  sheet.commit();
  await workbook.commit();
  const ms = performance.now() - t0;
  db.close();
  return { ms, rows, fileBytes: statSync(file).size };
}

/** Wraps the snapshot's reads so each records when it was asked for, when it ran out and how many rows. */
function timeReads(snapshot: ReconSnapshot, t0: number, spans: ReadSpan[]): void {
  const wrap = <A extends unknown[]>(name: string, read: (...args: A) => AsyncIterable<unknown>) =>
    async function* (...args: A) {
      const span: ReadSpan = {
        read: `${name}(${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(',')})`,
        startMs: performance.now() - t0,
        endMs: 0,
        rows: 0,
      };
      spans.push(span);
      for await (const row of read(...args)) {
        span.rows += 1;
        yield row;
      }
      span.endMs = performance.now() - t0;
    };
  const s = snapshot as unknown as Record<string, unknown>;
  s.transactions = wrap('transactions', snapshot.transactions.bind(snapshot));
  s.pending = wrap('pending', snapshot.pending.bind(snapshot));
  s.movements = wrap('movements', snapshot.movements.bind(snapshot));
  s.versions = wrap('versions', snapshot.versions.bind(snapshot));
  const anomalies = snapshot.anomalies.bind(snapshot);
  s.anomalies = async () => {
    const start = performance.now() - t0;
    const list = await anomalies();
    spans.push({ read: 'anomalies()', startMs: start, endMs: performance.now() - t0, rows: list.length });
    return list;
  };
}

async function phases(
  input: TaskInput,
): Promise<Omit<TaskResult, 'task' | 'maxRssBytes' | 'sampled' | 'cpuMs'>> {
  const deps = depsFor(input);
  const spans: ReadSpan[] = [];
  const snapshots = deps.store.reconSnapshot;
  const open = snapshots.open.bind(deps.store.reconSnapshot);
  let t0 = 0;
  snapshots.open = async (...args) => {
    const snapshot = await open(...args);
    timeReads(snapshot, t0, spans);
    return snapshot;
  };
  t0 = performance.now();
  const result = await runReconciliation(deps, {
    sink: input.sink,
    day: input.day,
    trigger: 'manual',
    asOf: new Date(input.asOf),
    dir: input.outDir,
  });
  const ms = performance.now() - t0;
  spans.push({ read: 'end', startMs: ms, endMs: ms, rows: 0 });
  snapshots.open = open;

  // Each piece alone, on a snapshot of its own.
  const alone: { label: string; ms: number; rows: number }[] = [];
  const time = async (label: string, fn: () => number | Promise<number>) => {
    const start = performance.now();
    const rows = await fn();
    alone.push({ label, ms: performance.now() - start, rows });
  };
  const snapshot = await deps.store.reconSnapshot.open(input.sink, input.day, new Date(input.asOf));
  await time('snapshot.transactions(), rows only', () => countRowsAsync(snapshot.transactions()));
  await time('summarise(snapshot)', async () => (await summarise(snapshot)).inputs.transactions);
  await snapshot.close();
  const db = new Database(path.join(input.dataDir, 'amil.db'), { readonly: true, fileMustExist: true });
  await time('plain SELECT of the baseline, rows only', () =>
    countRows(db.prepare(BASELINE_SELECT).raw(true).iterate(input.sink, input.day)),
  );
  db.close();
  await deps.store.close();
  return { ms, rows: result.summary.inputs.transactions, fileBytes: result.run.fileBytes, spans, alone };
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2] ?? '{}') as TaskInput;
  mkdirSync(input.outDir, { recursive: true });
  const stop = sampler();
  const cpu0 = process.cpuUsage();
  const run = {
    floor: () => Promise.resolve({ ms: 0, rows: 0, fileBytes: 0 }),
    ours,
    baseline: (i: TaskInput) => baseline(i, false),
    drained: (i: TaskInput) => baseline(i, true),
    phases,
  }[input.task];
  const result = await run(input);
  const cpu = process.cpuUsage(cpu0);
  const sampled = stop();
  const answer: TaskResult = {
    task: input.task,
    ...result,
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    sampled,
  };
  // Exit at once: the deps hold handles (HTTP agent, mailer) that would keep the process alive.
  process.send?.({ ok: true, result: answer }, () => process.exit(0));
}

main().catch((err: unknown) => {
  process.send?.({ ok: false, error: String((err as Error)?.stack ?? err) }, () => process.exit(1));
});
