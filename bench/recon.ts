/**
 * Reconciliation benchmark (a report, not a test): one agency day of N postings to its workbook, beside
 * exceljs writing the same N rows of plain values in the same run.
 *
 *   npm run bench:recon                      # N = 1,000,000
 *   npm run bench:recon -- --rows 100000     # or BENCH_RECON_ROWS=100000 (100k and 1M are understood)
 *   npm run bench:recon -- --repeat 3        # or BENCH_RECON_REPEAT: each task 3 times, medians reported
 *   npm run bench:recon -- --phases          # or BENCH_RECON_PHASES=1: where the run's time goes
 *   npm run bench:recon -- --cpu-prof DIR    # or BENCH_RECON_CPU_PROF=DIR: a .cpuprofile of each `ours` run
 *   npm run bench:recon -- --reseed          # or BENCH_RECON_RESEED=1: seed again even if cached
 *   npm run bench:recon -- --no-cache        # or BENCH_RECON_CACHE=0: seed into a temp dir removed after
 *
 * Not timed: the store is seeded through the real write path (bench/recon-seed.ts: schema check, the
 * store's ingestBatch in batches of 5,000, then the pipeline jobs in-process) and kept in
 * `<os tmpdir>/amil-bench-recon/<N>-<key>/` for the next run; the key changes with the seed code and the
 * migrations, and outdated stores are removed. Timed, each task in a child process of its
 * own (bench/recon-task.ts) so that its peak RSS (`process.resourceUsage().maxRSS`) is its own:
 *
 *   floor     a child with the same modules loaded that does nothing: the RSS every task starts from
 *   baseline  exceljs stream.xlsx.WorkbookWriter, one sheet of N rows x 18 columns of plain values (no styles,
 *             no shared strings) from a plain SELECT over normalised_postings, yielding every 2,000 rows
 *   drained   the same, also waiting at each yield until the zip has taken in what was written (flat memory)
 *   ours      runReconciliation(deps, { sink: 'LZS', day, trigger: 'manual', asOf, dir }) end to end
 *
 * Before each `ours` run the store's reconciliation runs are deleted, so each is the day's first run (no
 * comparison with a previous workbook). Exits 0 whenever it ran, whether or not the aims are met.
 */
import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { createDeps, seedDemoData } from '../core/bootstrap.ts';
import { RECON_EMAIL_QUEUE } from '../core/queues.ts';
import { fmtInt, fmtMb, fmtRatio, fmtSec, table } from './format.ts';
import { SEED_SINK, seedReconDay, type SeedExpectation } from './recon-seed.ts';
import type { ReadSpan, TaskInput, TaskName, TaskResult } from './recon-task.ts';

const DAY = '2026-11-20';
/** The nightly run's as-of: the next day 00:30 in Kuala Lumpur. */
const AS_OF = '2026-11-20T16:30:00.000Z';
const AIM_SECONDS = 20;
const AIM_RSS_BYTES = 256 * 1024 * 1024;
const TASK_TIMEOUT_MS = 15 * 60_000;
const CACHE_ROOT = path.join(tmpdir(), 'amil-bench-recon');
const MIGRATIONS = new URL('../core/store/sqlite/migrations/', import.meta.url);
const SEED_SOURCE = new URL('./recon-seed.ts', import.meta.url);

interface Options {
  rows: number;
  repeat: number;
  phases: boolean;
  cpuProf: string | undefined;
  reseed: boolean;
  cache: boolean;
}

function count(raw: string, name: string, min: number, max: number): number {
  const m = /^(\d[\d_,]*)(k|m)?$/i.exec(raw.trim());
  const value = m
    ? Number(m[1]!.replace(/[_,]/g, '')) * ({ k: 1e3, m: 1e6 }[m[2]?.toLowerCase() ?? ''] ?? 1)
    : NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

function options(argv: string[], env: NodeJS.ProcessEnv): Options {
  const flag = (name: string) => argv.includes(name);
  const value = (name: string) => {
    const i = argv.indexOf(name);
    if (i < 0) return undefined;
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`${name} needs a value`);
    return v;
  };
  const known = new Set(['--rows', '--repeat', '--phases', '--cpu-prof', '--reseed', '--no-cache']);
  for (const arg of argv) {
    if (arg.startsWith('--') && !known.has(arg)) throw new Error(`unknown option ${arg}`);
  }
  const yes = (v: string | undefined) => v !== undefined && v !== '' && v !== '0' && v !== 'false';
  const cpuProf = value('--cpu-prof') ?? env.BENCH_RECON_CPU_PROF;
  return {
    rows: count(value('--rows') ?? env.BENCH_RECON_ROWS ?? '1000000', 'rows', 1000, 10_000_000),
    repeat: count(value('--repeat') ?? env.BENCH_RECON_REPEAT ?? '1', 'repeat', 1, 20),
    phases: flag('--phases') || yes(env.BENCH_RECON_PHASES),
    cpuProf: cpuProf ? path.resolve(cpuProf) : undefined,
    reseed: flag('--reseed') || yes(env.BENCH_RECON_RESEED),
    cache: !flag('--no-cache') && env.BENCH_RECON_CACHE !== '0',
  };
}

// ---------------------------------------------------------------------------------------------------
// The seeded store (not timed)

interface Seeded {
  dataDir: string;
  expected: SeedExpectation;
  reused: boolean;
  dbBytes: number;
}

function cacheKey(): string {
  const hash = createHash('sha256').update(readFileSync(SEED_SOURCE));
  for (const file of readdirSync(MIGRATIONS).sort())
    hash.update(file).update(readFileSync(new URL(file, MIGRATIONS)));
  return hash.digest('hex').slice(0, 12);
}

const dbFile = (dataDir: string) => path.join(dataDir, 'amil.db');

async function seededStore(opts: Options, tempDirs: string[]): Promise<Seeded> {
  let dataDir: string;
  if (opts.cache) {
    const key = cacheKey();
    dataDir = path.join(CACHE_ROOT, `${opts.rows}-${key}`);
    const meta = path.join(dataDir, 'seed.json');
    mkdirSync(CACHE_ROOT, { recursive: true });
    // Stores seeded by other seed code or migrations are outdated, whatever their N.
    for (const entry of readdirSync(CACHE_ROOT)) {
      if (!entry.endsWith(`-${key}`)) rmSync(path.join(CACHE_ROOT, entry), { recursive: true, force: true });
    }
    if (existsSync(meta) && !opts.reseed) {
      const expected = JSON.parse(readFileSync(meta, 'utf8')) as SeedExpectation;
      return { dataDir, expected, reused: true, dbBytes: fileBytes(dbFile(dataDir)) };
    }
    rmSync(dataDir, { recursive: true, force: true });
    const partial = `${dataDir}.partial`;
    rmSync(partial, { recursive: true, force: true });
    const expected = await seed(partial, opts.rows);
    writeFileSync(path.join(partial, 'seed.json'), `${JSON.stringify(expected, null, 2)}\n`);
    renameSync(partial, dataDir);
    return { dataDir, expected, reused: false, dbBytes: fileBytes(dbFile(dataDir)) };
  }
  dataDir = mkdtempSync(path.join(tmpdir(), 'amil-bench-recon-'));
  tempDirs.push(dataDir);
  const expected = await seed(dataDir, opts.rows);
  return { dataDir, expected, reused: false, dbBytes: fileBytes(dbFile(dataDir)) };
}

function fileBytes(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return Number.NaN;
  }
}

async function seed(dataDir: string, rows: number): Promise<SeedExpectation> {
  const deps = createDeps({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SEED_DEMO: 'true' });
  try {
    await seedDemoData(deps.store, new Date('2026-11-01T00:00:00Z'));
    const t0 = performance.now();
    // A progress line rewritten in place on a terminal; in a log, only the start.
    const tty = process.stdout.isTTY;
    if (!tty) console.log(`  seeding ${fmtInt(rows)} postings (about 90 s per million)...`);
    const expected = await seedReconDay(deps, rows, DAY, (line) => {
      if (tty) process.stdout.write(`\r  seeding: ${line} (${fmtSec(performance.now() - t0)} s)        `);
    });
    if (tty) process.stdout.write('\n');
    return expected;
  } finally {
    await deps.store.close(); // the last connection checkpoints and removes the WAL
    await deps.callbacks.close();
  }
}

/** Each `ours` run is the day's first: no previous run, no e-mail job left from an earlier one. */
function forgetRuns(dataDir: string): void {
  const db = new Database(dbFile(dataDir));
  try {
    db.transaction(() => {
      db.prepare('DELETE FROM outbox WHERE queue = ?').run(RECON_EMAIL_QUEUE);
      db.prepare('DELETE FROM recon_deliveries').run();
      db.prepare('DELETE FROM recon_runs').run();
    })();
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// Tasks in child processes

type Answer = { ok: true; result: TaskResult } | { ok: false; error: string };

function runTask(input: TaskInput, cpuProf: string | undefined): Promise<TaskResult> {
  const execArgv = [...process.execArgv];
  if (cpuProf) execArgv.push('--cpu-prof', `--cpu-prof-dir=${cpuProf}`);
  // fork keeps process.execArgv, which carries tsx's loader, so the child runs TypeScript too.
  const child = fork(new URL('./recon-task.ts', import.meta.url), [JSON.stringify(input)], {
    execArgv,
    serialization: 'advanced',
  });
  return new Promise((resolve, reject) => {
    let answer: Answer | undefined;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`task ${input.task} did not finish within ${TASK_TIMEOUT_MS / 1000} s`));
    }, TASK_TIMEOUT_MS);
    child.on('message', (message: Answer) => {
      answer = message;
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (answer?.ok) resolve(answer.result);
      else if (answer) reject(new Error(`task ${input.task} failed: ${answer.error}`));
      else
        reject(
          new Error(
            `task ${input.task} exited (code ${String(code)}, signal ${String(signal)}) without a result`,
          ),
        );
    });
  });
}

async function measure(
  task: TaskName,
  seeded: Seeded,
  opts: Options,
  tempDirs: string[],
): Promise<TaskResult> {
  if (task === 'ours' || task === 'phases') forgetRuns(seeded.dataDir);
  const outDir = mkdtempSync(path.join(tmpdir(), `amil-bench-recon-${task}-`));
  tempDirs.push(outDir);
  try {
    return await runTask(
      { task, dataDir: seeded.dataDir, outDir, sink: SEED_SINK, day: DAY, asOf: AS_OF },
      task === 'ours' ? opts.cpuProf : undefined,
    );
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// Report

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

interface Figures {
  ms: number;
  maxRss: number;
  cpuMs: number;
  fileBytes: number;
  rows: number;
}

function figures(runs: TaskResult[]): Figures {
  return {
    ms: median(runs.map((r) => r.ms)),
    maxRss: median(runs.map((r) => r.maxRssBytes)),
    cpuMs: median(runs.map((r) => r.cpuMs)),
    fileBytes: median(runs.map((r) => r.fileBytes)),
    rows: median(runs.map((r) => r.rows)),
  };
}

/**
 * Which consumer a read belongs to in runReconciliation as written: the summary pass reads everything up to
 * its anomalies(); the sheets follow in order (Transactions, Exceptions, Pending, Adjustments).
 */
function consumers(reads: readonly ReadSpan[]): string[] {
  const summaryEnd = reads.findIndex((r) => r.read === 'anomalies()');
  let transactions = 0;
  let anomalies = 0;
  return reads.map((r, i) => {
    if (i <= summaryEnd) return `summary pass: ${r.read}`;
    if (r.read.startsWith('transactions(')) {
      transactions += 1;
      return transactions === 1 && r.read === 'transactions()'
        ? `sheet Transactions (after Summary): ${r.read}`
        : `sheet Exceptions: ${r.read}`;
    }
    if (r.read === 'anomalies()') return `sheet Exceptions: ${r.read}${(anomalies += 1) > 1 ? ' again' : ''}`;
    if (r.read === 'pending(closing)') return `sheet Pending: ${r.read}`;
    if (r.read === 'movements()') return `sheet Adjustments: ${r.read}`;
    return r.read;
  });
}

function printPhases(result: TaskResult): void {
  const spans = result.spans ?? [];
  const reads = spans.filter((s) => s.read !== 'end');
  const labels = consumers(reads);
  console.log(
    `\nphases of one instrumented run (${fmtSec(result.ms)} s; each segment runs from asking for a read to`,
  );
  console.log('asking for the next, so it holds the consumer of that read: the summary pass or a sheet)');
  const rows: string[][] = [];
  rows.push(['setup: agency, readiness check', fmtSec(spans[0]?.startMs ?? Number.NaN), '', '']);
  spans.forEach((span: ReadSpan, i) => {
    if (span.read === 'end') return;
    const next = spans[i + 1];
    rows.push([
      labels[i] ?? span.read,
      fmtSec((next?.startMs ?? span.endMs) - span.startMs),
      fmtSec(span.endMs - span.startMs),
      fmtInt(span.rows),
    ]);
  });
  const last = reads[reads.length - 1];
  rows.push(['rest: zip commit, rename, sha256, run record', fmtSec(result.ms - (last?.endMs ?? 0)), '', '']);
  console.log(table(['segment', 'seconds', 'read open', 'rows'], rows));
  console.log('\neach piece alone, on a snapshot of its own');
  console.log(
    table(
      ['piece', 'seconds', 'rows', 'rows/s'],
      (result.alone ?? []).map((a) => [
        a.label,
        fmtSec(a.ms),
        fmtInt(a.rows),
        fmtInt(a.rows / (a.ms / 1000)),
      ]),
    ),
  );
}

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2), process.env);
  const tempDirs: string[] = [];
  const cleanup = () => {
    for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  };
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      cleanup();
      process.exit(code);
    });
  }
  try {
    console.log(
      `reconciliation benchmark: ${fmtInt(opts.rows)} ${SEED_SINK} postings on ${DAY}, as of ${AS_OF} ` +
        `(next day 00:30 KL); each task in its own child process, ${opts.repeat} run(s) each`,
    );
    const s0 = performance.now();
    const seeded = await seededStore(opts, tempDirs);
    const e = seeded.expected;
    console.log(
      seeded.reused
        ? `  store: reused ${seeded.dataDir} (${fmtMb(seeded.dbBytes)} MB)`
        : `  store: seeded ${fmtInt(e.storedPostings)} postings in ${fmtInt(e.batches)} batches in ` +
            `${fmtSec(performance.now() - s0)} s (ingest ${fmtSec(e.ingestMs)} s, pipeline ${fmtSec(e.pipelineMs)} s), ` +
            `${fmtMb(seeded.dbBytes)} MB, ${opts.cache ? `kept in ${seeded.dataDir}` : 'removed after the run'}`,
    );

    process.stdout.write('  floor...');
    const floor = await measure('floor', seeded, opts, tempDirs);
    const baselineRuns: TaskResult[] = [];
    const drainedRuns: TaskResult[] = [];
    const oursRuns: TaskResult[] = [];
    for (let i = 0; i < opts.repeat; i += 1) {
      process.stdout.write(' baseline...');
      baselineRuns.push(await measure('baseline', seeded, opts, tempDirs));
      process.stdout.write(' drained baseline...');
      drainedRuns.push(await measure('drained', seeded, opts, tempDirs));
      process.stdout.write(' ours...');
      oursRuns.push(await measure('ours', seeded, opts, tempDirs));
    }
    let phases: TaskResult | undefined;
    if (opts.phases) {
      process.stdout.write(' phases...');
      phases = await measure('phases', seeded, opts, tempDirs);
    }
    process.stdout.write(' done\n\n');

    const base = figures(baselineRuns);
    const our = figures(oursRuns);
    const row = (label: string, f: Figures, ratios: boolean) => [
      label,
      fmtInt(f.rows),
      fmtSec(f.ms),
      f.ms > 0 ? fmtInt(f.rows / (f.ms / 1000)) : '-',
      fmtMb(f.maxRss),
      fmtMb(f.maxRss - floor.maxRssBytes),
      fmtSec(f.cpuMs),
      f.fileBytes > 0 ? fmtMb(f.fileBytes) : '-',
      ratios ? fmtRatio(f.ms / base.ms) : '-',
      ratios ? fmtRatio(f.maxRss / base.maxRss) : '-',
    ];
    console.log(
      table(
        [
          'task',
          'rows',
          'seconds',
          'rows/s',
          'peak RSS MB',
          'above floor',
          'CPU s',
          'file MB',
          'time / base',
          'RSS / base',
        ],
        [
          row('floor: modules loaded, nothing done', { ...figures([floor]), ms: Number.NaN }, false),
          row('baseline: exceljs stream, plain values', base, true),
          row('  the same, waiting for the zip to drain', figures(drainedRuns), true),
          row('ours: runReconciliation end to end', our, true),
        ],
      ),
    );
    if (opts.repeat > 1) {
      console.log(
        `  medians of ${opts.repeat} runs; ours seconds ${oursRuns.map((r) => fmtSec(r.ms)).join(', ')}; ` +
          `baseline ${baselineRuns.map((r) => fmtSec(r.ms)).join(', ')}`,
      );
    }
    const last = oursRuns[oursRuns.length - 1]!;
    console.log(
      `  ours peaks sampled every 100 ms: RSS ${fmtMb(last.sampled.rss)} MB, heap used ${fmtMb(last.sampled.heapUsed)} MB, ` +
        `external + array buffers ${fmtMb(last.sampled.external)} MB`,
    );
    console.log(
      `  rows: the Transactions sheet (ours also writes Summary, Exceptions, Pending and Adjustments); ` +
        `CPU: user + system of the child during the task`,
    );

    console.log('\nchecks');
    const inputs = last.inputs ?? {};
    const want: [string, number][] = [
      ['transactions', e.transactions],
      ['flagged', e.flagged],
      ['anomalies', e.anomalies],
      ['movements', e.movements],
      ['adjustments', e.adjustments],
      ['pendingClosing', e.pendingClosing],
    ];
    const wrong = want.filter(([k, v]) => inputs[k] !== v);
    console.log(
      `  ours: ${want.map(([k]) => `${k} ${fmtInt(inputs[k] ?? Number.NaN)}`).join(', ')}; pending roll ` +
        `${last.balances ? 'balances' : 'DOES NOT BALANCE'}: ` +
        (wrong.length === 0 && last.balances
          ? 'OK'
          : `MISMATCH (seeded ${wrong.map(([k, v]) => `${k} ${fmtInt(v)}`).join(', ')})`),
    );
    const baseOk = [...baselineRuns, ...drainedRuns].every((r) => r.rows === opts.rows);
    console.log(`  baselines: ${fmtInt(base.rows)} rows written: ${baseOk ? 'OK' : 'MISMATCH'}`);

    if (phases) printPhases(phases);
    if (opts.cpuProf) console.log(`\n  CPU profiles of the ours runs: ${opts.cpuProf}`);

    console.log('\naims');
    const valid = wrong.length === 0 && last.balances === true;
    const verdict = (ok: boolean) => (!valid ? 'NOT MET (run invalid)' : ok ? 'MET' : 'NOT MET');
    console.log(
      `  ${fmtInt(opts.rows)} rows to a workbook in ${fmtSec(our.ms)} s (aim <= ${AIM_SECONDS} s): ` +
        verdict(our.ms <= AIM_SECONDS * 1000),
    );
    console.log(
      `  peak RSS ${fmtMb(our.maxRss)} MB (aim <= ${fmtMb(AIM_RSS_BYTES)} MB): ${verdict(our.maxRss <= AIM_RSS_BYTES)}`,
    );
    if (opts.rows !== 1_000_000) console.log('  (the aims are set for 1,000,000 rows)');
  } finally {
    cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
