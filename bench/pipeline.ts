/**
 * Pipeline benchmark (a report, not a test): records/s from stored posting to agency ledger, on SQLite and
 * on PostgreSQL in the same run.
 *
 *   npm run bench:pipeline                    # 100,000 postings
 *   BENCH_POSTINGS=20000 npm run bench:pipeline
 *
 * Not timed: N postings are stored through the real store path (ingestBankBatch, no HTTP) in batches of
 * 1,000 records, which leaves a normalise job per batch in the outbox. Timed, each on a store of its own
 * (a SQLite file, or a fresh database on a throwaway PostgreSQL 15, bench/postgres.ts), per engine:
 *
 *   A1 the pipeline on BullMQ with one worker process: this process relays the outbox to Redis
 *      (createBullRuntime without workers), a forked process runs a BullMQ worker per queue (concurrency 1)
 *   A2 the same with two worker processes on the one Redis and the one store
 *
 *   The worker processes are started, and warmed on 5,000 postings of their own through a relay that is
 *   stopped again, before the N postings are stored: the timed run measures them running, as a
 *   deployment's long-lived workers do, not their start (at N = 100,000 their start was up to a fifth of
 *   the time). This process is warmed once, before every scenario.
 *   B  the same pipeline in-process: createInProcessRuntime(...).drain()
 *
 * and once, as the baseline of the same job count on the same Redis:
 *
 *   C1 a trivial BullMQ job of the same count: N / 1,000 no-op jobs, each standing for 1,000 records
 *   C2 a job per record: N no-op jobs (addBulk in chunks), the per-job cap
 *
 * Each row also gives the CPU (from /proc) of this process, the worker processes, redis-server and the
 * PostgreSQL server (postmaster and backends), so the report says where the time went.
 *
 * A and B are checked: the ledger must hold N entries, per sink as stored, with no failed job. The script
 * starts its own redis-server and PostgreSQL on free loopback ports and removes everything it made. It
 * exits 0 whenever it ran, whether or not the aim is met; a scenario that overruns its time limit is
 * reported, not awaited.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createDeps, seedDemoData } from '../core/bootstrap.ts';
import type { Deps } from '../core/deps.ts';
import { TEST_SINK } from '../core/store/index.ts';
import { ingestBankBatch } from '../ingest/bank-webhook/service.ts';
import { createBullRuntime } from '../pipeline/bullmq/runtime.ts';
import { createBullWorkers } from '../pipeline/bullmq/workers.ts';
import { jobOptionsFor } from '../pipeline/retry.ts';
import { loadConfig } from '../core/config.ts';
import { createInProcessRuntime } from '../pipeline/in-process-runtime.ts';
import type { PipelineRuntime } from '../pipeline/runtime.ts';
import type { BankTransaction } from '../schemas/index.ts';
import { startBenchPostgres } from './postgres.ts';
import { benchRecord, orderSequence } from './records.ts';
import { processCpuSeconds, processTreeCpuSeconds, startRedis, type BenchRedis } from './redis.ts';
import { fmtInt, fmtPct, fmtRatio, fmtSec, table } from './format.ts';
import { envInt } from './env.ts';

const DEMO_PARTNER = 'demo-bank'; // fixtures/demo/seed.json
const RECORDS_PER_BATCH = 1000;
/** Stored batches handed to the store at once (its group commit takes up to 5,000 records). */
const BATCHES_IN_FLIGHT = 5;
/** addBulk chunk of the trivial baselines. */
const ADD_CHUNK = 1000;
const POLL_MS = 20;
/** The pipeline's own job options (retry policy of pipeline/retry.ts), for the bare-BullMQ scenario. */
const JOB_OPTIONS = jobOptionsFor(loadConfig({}), 'normalise');
const WARMUP_POSTINGS = 5000;
const AIM_RECORDS_PER_SECOND = 50_000;

// ---------------------------------------------------------------------------------------------------
// Temp dirs, redis and the run-time bound: everything made here is removed, whatever happens

const tempDirs: string[] = [];
let redis: BenchRedis | undefined;
/** The bench PostgreSQL's postmaster, for its CPU in every scenario's usage. */
let postgresPid: number | undefined;
const workerProcesses: ChildProcess[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

function cleanupNow(): void {
  for (const child of workerProcesses) if (child.exitCode === null) child.kill('SIGKILL');
  redis?.killNow();
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

type Bounded<T> = { done: true; value: T } | { done: false; error: string };

/** Waits for `promise` at most `ms`; a late promise is left to settle on its own (never unhandled). */
async function within<T>(promise: Promise<T>, ms: number): Promise<Bounded<T>> {
  let timer: NodeJS.Timeout | undefined;
  const settled = promise.then(
    (value): Bounded<T> => ({ done: true, value }),
    (err: unknown): Bounded<T> => ({ done: false, error: String((err as Error)?.message ?? err) }),
  );
  const late = new Promise<Bounded<T>>((resolve) => {
    timer = setTimeout(() => resolve({ done: false, error: `did not finish within ${ms / 1000} s` }), ms);
  });
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------------
// Setup (not timed): stored postings, a normalise job per stored batch waiting in the outbox

/** The bench record, with every tenth (n ending in 5) sent as the bank's live test (agency BANK). */
function pipelineRecord(orderno: string, n: number): BankTransaction {
  const record = benchRecord(orderno, n);
  return n % 10 === 5 ? { ...record, agency: 'BANK' } : record;
}

function sinkOf(deps: Deps, agency: string): string {
  const route = deps.config.webhook.routes[agency];
  if (!route) throw new Error(`no route for bank agency ${agency}`);
  return route.kind === 'test' ? TEST_SINK : route.agency;
}

/**
 * Stores `total` postings in batches of 1,000, ordernos from `prefix`; returns how many entries each sink's
 * ledger should gain.
 */
async function storePostings(deps: Deps, total: number, prefix = 'PIPE'): Promise<Map<string, number>> {
  const next = orderSequence(prefix);
  const expected = new Map<string, number>();
  let inFlight: Promise<void>[] = [];
  for (let stored = 0; stored < total; stored += RECORDS_PER_BATCH) {
    const size = Math.min(RECORDS_PER_BATCH, total - stored);
    const transactions: BankTransaction[] = [];
    for (let i = 0; i < size; i += 1) {
      const { orderno, n } = next();
      const record = pipelineRecord(orderno, n);
      transactions.push(record);
      const sink = sinkOf(deps, record.agency);
      expected.set(sink, (expected.get(sink) ?? 0) + 1);
    }
    const request = { transactions };
    if (!deps.validators.bankWebhookRequest(request)) {
      throw new Error(
        `benchmark batch fails the schema: ${JSON.stringify(deps.validators.bankWebhookRequest.errors())}`,
      );
    }
    const body = Buffer.from(JSON.stringify(request));
    inFlight.push(
      ingestBankBatch(deps, { partnerId: DEMO_PARTNER, contentType: 'application/json', body, request }).then(
        (response) => {
          if (response.summary.accepted !== size) {
            throw new Error(`a stored batch accepted ${response.summary.accepted} of ${size} records`);
          }
        },
      ),
    );
    if (inFlight.length >= BATCHES_IN_FLIGHT) {
      await Promise.all(inFlight);
      inFlight = [];
    }
  }
  await Promise.all(inFlight);
  return expected;
}

// ---------------------------------------------------------------------------------------------------
// Resource use over a timed run

interface Usage {
  /** CPU of this process (all its threads) in % of one core. */
  nodeCpu: number;
  /** CPU of the worker processes together, in % of one core (0 when the workers run here). */
  workersCpu: number;
  /** Event-loop utilisation of the main thread, in %. */
  mainBusy: number;
  /** CPU of redis-server in % of one core (NaN without /proc). */
  redisCpu: number;
  /** CPU of the PostgreSQL server (postmaster and backends) in % of one core: the whole run's, either engine. */
  postgresCpu: number;
}

function usageMeter(workerPids: readonly number[] = []): () => Usage {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const redis0 = redis ? processCpuSeconds(redis.pid) : Number.NaN;
  const postgres0 = postgresPid ? processTreeCpuSeconds(postgresPid) : Number.NaN;
  const workers = () => workerPids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
  const workers0 = workers();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return {
      nodeCpu: ((cpu.user + cpu.system) / 1e6 / seconds) * 100,
      workersCpu: ((workers() - workers0) / seconds) * 100,
      mainBusy: performance.eventLoopUtilization(elu0).utilization * 100,
      redisCpu: redis ? ((processCpuSeconds(redis.pid) - redis0) / seconds) * 100 : Number.NaN,
      postgresCpu: postgresPid
        ? ((processTreeCpuSeconds(postgresPid) - postgres0) / seconds) * 100
        : Number.NaN,
    };
  };
}

// ---------------------------------------------------------------------------------------------------
// A and B: the pipeline, from the outbox's normalise jobs to the agency ledgers

interface PipelineRun {
  records: number;
  /** Outbox rows when done: a normalise job per stored batch and a ledger job per batch and sink. */
  jobs: number;
  setupMs: number;
  ms: number;
  usage: Usage;
  finished: boolean;
  error: string | undefined;
  expected: Map<string, number>;
  ledger: Map<string, number>;
  failedJobs: number;
}

interface Runner {
  runtime: PipelineRuntime;
  /**
   * Not timed: runs the postings stored so far through the runner's worker processes, which start cold
   * (this process is warmed once, before every scenario). A deployment's workers run for days: the timed
   * run measures them warm, not their start.
   */
  warmUp?(): Promise<void>;
  /** The timed part: from taking the first job until nothing is left. */
  run(): Promise<void>;
  /** The worker processes, whose CPU is counted with this one's. */
  pids?: readonly number[];
  /** Releases what the runner started (worker processes). */
  stop?(): Promise<void>;
}

/** Where a scenario's store lives: a SQLite file in its data dir, or a fresh database on the bench PostgreSQL. */
type Engine = { name: 'SQLite' } | { name: 'PostgreSQL'; url: string };

let databases = 0;

/** The store settings of a new scenario on `engine` (for PostgreSQL, a database of its own, C collation). */
async function storeEnv(engine: Engine): Promise<Record<string, string>> {
  if (engine.name === 'SQLite') return {};
  databases += 1;
  const name = `amil_pipeline_${databases}`;
  const admin = new pg.Client({ connectionString: engine.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(engine.url);
  url.pathname = `/${name}`;
  return { DATABASE_URL: url.toString() };
}

const LEDGER_COUNTS = 'SELECT sink, count(*) AS n FROM ledger_entries GROUP BY sink';
const OUTBOX_COUNT = 'SELECT count(*) AS n FROM outbox';

async function readCounts(deps: Deps): Promise<{ ledger: Map<string, number>; outbox: number }> {
  const url = deps.config.databaseUrl;
  if (url !== undefined) {
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const rows = (await db.query<{ sink: string; n: string }>(LEDGER_COUNTS)).rows;
      const outbox = Number((await db.query<{ n: string }>(OUTBOX_COUNT)).rows[0]?.n ?? 0);
      return { ledger: new Map(rows.map((r) => [r.sink, Number(r.n)])), outbox };
    } finally {
      await db.end();
    }
  }
  const db = new Database(deps.config.databaseFile, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare<[], { sink: string; n: number }>(LEDGER_COUNTS).all();
    const outbox = db.prepare<[], { n: number }>(OUTBOX_COUNT).get()?.n ?? 0;
    return { ledger: new Map(rows.map((r) => [r.sink, r.n])), outbox };
  } finally {
    db.close();
  }
}

async function pipelineScenario(
  engine: Engine,
  env: Record<string, string>,
  total: number,
  limitMs: number,
  makeRunner: (deps: Deps, env: Record<string, string>) => Promise<Runner>,
): Promise<PipelineRun> {
  const dir = tempDir('amil-bench-pipeline-');
  const scenarioEnv = { DATA_DIR: dir, LOG_LEVEL: 'silent', ...(await storeEnv(engine)), ...env };
  const deps = createDeps({ ...scenarioEnv, SEED_DEMO: 'true' });
  let runner: Runner | undefined;
  try {
    await seedDemoData(deps.store, deps.clock.now());
    runner = await makeRunner(deps, scenarioEnv);
    if (runner.warmUp) {
      await storePostings(deps, WARMUP_POSTINGS, 'WARM');
      await runner.warmUp();
    }
    const before = await readCounts(deps);
    const s0 = performance.now();
    const expected = await storePostings(deps, total);
    const setupMs = performance.now() - s0;

    const { runtime } = runner;
    const meter = usageMeter(runner.pids ?? []);
    const t0 = performance.now();
    const outcome = await within(runner.run(), limitMs);
    const ms = performance.now() - t0;
    const usage = meter();

    const failedJobs = outcome.done ? (await runtime.failed()).length : Number.NaN;
    await runtime.stop();
    const after = await readCounts(deps);
    // What the timed run wrote: the warm-up's entries and jobs were there before it.
    const ledger = new Map(
      [...after.ledger].map(([sink, n]) => [sink, n - (before.ledger.get(sink) ?? 0)] as const),
    );
    return {
      records: total,
      jobs: after.outbox - before.outbox,
      setupMs,
      ms,
      usage,
      finished: outcome.done,
      error: outcome.done ? undefined : outcome.error,
      expected,
      ledger,
      failedJobs,
    };
  } finally {
    await runner?.stop?.();
    await deps.store.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// Worker processes (A1, A2): this script forked, running a BullMQ worker per queue and nothing else

const WORKER_ROLE = 'pipeline-worker';

/** The forked side: createBullWorkers on the scenario's store and Redis until the parent disconnects. */
function runWorkerProcess(): void {
  const deps = createDeps({ ...process.env, SEED_DEMO: 'false' });
  const workers = createBullWorkers(deps);
  workers.start();
  process.send?.('ready');
  process.once('disconnect', () => {
    void (async () => {
      await workers.stop();
      await deps.store.close();
      process.exit(0);
    })();
  });
}

/** Forks `count` worker processes on the scenario's settings; resolves once each has started its workers. */
async function startWorkerProcesses(env: Record<string, string>, count: number): Promise<ChildProcess[]> {
  const children = Array.from({ length: count }, () =>
    // fork keeps process.execArgv, which carries tsx's loader, so the child runs TypeScript too.
    fork(new URL(import.meta.url), [], { env: { ...process.env, ...env, BENCH_ROLE: WORKER_ROLE } }),
  );
  workerProcesses.push(...children);
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve, reject) => {
          child.once('message', () => resolve());
          child.once('exit', (code) =>
            reject(new Error(`a worker process exited (${String(code)}) at start`)),
          );
        }),
    ),
  );
  return children;
}

/** Disconnects the worker processes (each finishes its job in flight) and waits for them to exit. */
async function stopWorkerProcesses(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          if (child.connected) child.disconnect();
          else child.kill();
        }),
    ),
  );
}

/** A1 / A2: this process relays the outbox to Redis; `count` forked processes run the workers. */
function bullWithWorkerProcesses(count: number) {
  return async (deps: Deps, env: Record<string, string>): Promise<Runner> => {
    const children = await startWorkerProcesses(env, count);
    const runtime = createBullRuntime(deps, { pollMs: POLL_MS, withWorkers: false });
    return {
      runtime,
      pids: children.flatMap((c) => (c.pid === undefined ? [] : [c.pid])),
      // A relay of its own, stopped before the timed one starts: the postings stored next wait for it.
      warmUp: async () => {
        const warm = createBullRuntime(deps, { pollMs: POLL_MS, withWorkers: false });
        warm.start();
        await warm.drain();
        await warm.stop();
      },
      run: () => {
        runtime.start();
        return runtime.drain();
      },
      stop: () => stopWorkerProcesses(children),
    };
  };
}

function ledgerMatches(run: PipelineRun): boolean {
  const sinks = new Set([...run.expected.keys(), ...run.ledger.keys()]);
  return [...sinks].every((sink) => run.expected.get(sink) === run.ledger.get(sink));
}

function ledgerTotal(run: PipelineRun): number {
  return [...run.ledger.values()].reduce((a, b) => a + b, 0);
}

// ---------------------------------------------------------------------------------------------------
// C: trivial BullMQ jobs, a no-op processor on one queue, concurrency 1 like the pipeline's workers

interface TrivialRun {
  jobs: number;
  records: number;
  /** From the first add until every job is added. */
  addMs: number;
  /** From the first add until the last job completed. */
  ms: number;
  usage: Usage;
  finished: boolean;
  error: string | undefined;
  failedJobs: number;
}

async function trivialScenario(
  url: string,
  prefix: string,
  name: string,
  jobs: number,
  recordsPerJob: number,
  limitMs: number,
): Promise<TrivialRun> {
  // The connection options of pipeline/bullmq/workers.ts's workers; the queue waits for its connection up front.
  const queueConnection = new Redis(url, { maxRetriesPerRequest: null });
  const workerConnection = new Redis(url, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection: queueConnection, prefix });
  let completed = 0;
  let failed = 0;
  let records = 0;
  let allDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    allDone = resolve;
  });
  const worker = new Worker(name, (_job: Job<{ batch: number; records: number }>) => Promise.resolve(), {
    connection: workerConnection,
    prefix,
    concurrency: 1,
    lockDuration: 60_000,
    autorun: false,
  });
  let workerError: string | undefined;
  worker.on('error', (err) => {
    workerError ??= err.message;
  });
  const settle = () => {
    if (completed + failed === jobs) allDone();
  };
  worker.on('completed', (job) => {
    completed += 1;
    records += (job.data as { records: number }).records;
    settle();
  });
  worker.on('failed', () => {
    failed += 1;
    settle();
  });
  try {
    await queue.waitUntilReady();
    await worker.waitUntilReady();
    const meter = usageMeter();
    const t0 = performance.now();
    worker.run().catch((err: unknown) => {
      workerError ??= String(err);
    });
    const adding = (async () => {
      for (let first = 0; first < jobs; first += ADD_CHUNK) {
        const chunk = [];
        for (let i = first; i < Math.min(jobs, first + ADD_CHUNK); i += 1) {
          chunk.push({
            name,
            data: { batch: i, records: recordsPerJob },
            opts: { ...JOB_OPTIONS, jobId: `${name}.${i}` },
          });
        }
        await queue.addBulk(chunk);
      }
      return performance.now() - t0;
    })();
    const outcome = await within(
      Promise.all([adding, done]).then(([addMs]) => addMs),
      limitMs,
    );
    const ms = performance.now() - t0;
    const usage = meter();
    return {
      jobs,
      records,
      addMs: outcome.done ? outcome.value : Number.NaN,
      ms,
      usage,
      finished: outcome.done,
      error: outcome.done ? workerError : outcome.error,
      failedJobs: failed,
    };
  } finally {
    await worker.close(true);
    await queue.close();
    queueConnection.disconnect();
    workerConnection.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------------
// Report

const perSecond = (count: number, ms: number, finished: boolean) =>
  finished && ms > 0 ? count / (ms / 1000) : Number.NaN;

const verdictOf = (ok: boolean, finished: boolean) => (ok ? 'OK' : finished ? 'MISMATCH' : 'NOT FINISHED');

function sinkList(counts: Map<string, number>): string {
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([sink, n]) => `${sink} ${fmtInt(n)}`)
    .join(', ');
}

// ---------------------------------------------------------------------------------------------------

interface EngineRuns {
  engine: string;
  one: PipelineRun;
  two: PipelineRun;
  inProcess: PipelineRun;
}

async function engineScenarios(
  engine: Engine,
  total: number,
  limitMs: number,
  prefix: string,
): Promise<EngineRuns> {
  const redisUrl = redis?.url ?? '';
  process.stdout.write(`  ${engine.name}: A1 (BullMQ, 1 worker process)...`);
  const one = await pipelineScenario(
    engine,
    { REDIS_URL: redisUrl, QUEUE_PREFIX: `${prefix}${engine.name}1` },
    total,
    limitMs,
    bullWithWorkerProcesses(1),
  );
  process.stdout.write(' A2 (BullMQ, 2 worker processes)...');
  const two = await pipelineScenario(
    engine,
    { REDIS_URL: redisUrl, QUEUE_PREFIX: `${prefix}${engine.name}2` },
    total,
    limitMs,
    bullWithWorkerProcesses(2),
  );
  process.stdout.write(' B (in-process)...');
  const inProcess = await pipelineScenario(engine, {}, total, limitMs, (deps) => {
    const runtime = createInProcessRuntime(deps, { pollMs: POLL_MS, maxAttempts: 3, backoffMs: 0 });
    return Promise.resolve({ runtime, run: () => runtime.drain() });
  });
  process.stdout.write(' done\n');
  return { engine: engine.name, one, two, inProcess };
}

async function main(): Promise<void> {
  const total = envInt('BENCH_POSTINGS', 100_000, 1000, 10_000_000);
  const limitMs = envInt('BENCH_SCENARIO_SECONDS', 300, 10, 3600) * 1000;
  // Setup, the eight scenarios and cleanup: past this the watchdog removes everything and exits.
  const hardLimitMs = 10 * limitMs + 180_000;
  const watchdog = setTimeout(() => {
    console.error(`\nbench/pipeline: gave up after ${hardLimitMs / 1000} s; cleaning up`);
    cleanupNow();
    process.exit(1);
  }, hardLimitMs);
  watchdog.unref();
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      cleanupNow();
      process.exit(code);
    });
  }

  let postgres: { url: string; pid: number; stop: () => Promise<void> } | undefined;
  try {
    redis = await startRedis(tempDir('amil-bench-redis-'));
    postgres = await startBenchPostgres();
    postgresPid = postgres.pid;
    const prefix = `bench${process.pid}x${Date.now().toString(36)}`;
    const batches = Math.ceil(total / RECORDS_PER_BATCH);
    console.log(
      `pipeline benchmark: ${fmtInt(total)} postings stored in ${fmtInt(batches)} batches of ` +
        `${fmtInt(RECORDS_PER_BATCH)}; redis-server ${redis.url}; PostgreSQL 15 (fsync on); each timed ` +
        `scenario limited to ${limitMs / 1000} s`,
    );

    // Warm-up (not reported): the job processors and the store code get compiled before anything is timed.
    process.stdout.write('  warm-up...');
    await pipelineScenario({ name: 'SQLite' }, {}, WARMUP_POSTINGS, limitMs, (deps) => {
      const runtime = createInProcessRuntime(deps, { pollMs: POLL_MS, maxAttempts: 3, backoffMs: 0 });
      return Promise.resolve({ runtime, run: () => runtime.drain() });
    });
    process.stdout.write(' done\n');

    const engines = [
      await engineScenarios({ name: 'SQLite' }, total, limitMs, prefix),
      await engineScenarios({ name: 'PostgreSQL', url: postgres.url }, total, limitMs, prefix),
    ];

    process.stdout.write('  C1 (trivial, batched)...');
    const trivialBatched = await trivialScenario(
      redis.url,
      `${prefix}t`,
      'trivial-batched',
      batches,
      RECORDS_PER_BATCH,
      limitMs,
    );
    process.stdout.write(' C2 (trivial, job per record)...');
    const trivialPerRecord = await trivialScenario(
      redis.url,
      `${prefix}t`,
      'trivial-per-record',
      total,
      1,
      limitMs,
    );
    process.stdout.write(' done\n\n');

    // -- the report ---------------------------------------------------------------------------------
    const c1Rate = perSecond(trivialBatched.records, trivialBatched.ms, trivialBatched.finished);
    const c2Rate = perSecond(trivialPerRecord.records, trivialPerRecord.ms, trivialPerRecord.finished);
    const rateOf = (run: PipelineRun) => perSecond(ledgerTotal(run), run.ms, run.finished);
    const pipelineRow = (label: string, run: PipelineRun) => [
      label,
      fmtInt(ledgerTotal(run)),
      fmtInt(run.jobs),
      run.finished ? fmtSec(run.ms) : `>${fmtSec(run.ms)}`,
      fmtInt(rateOf(run)),
      fmtRatio(rateOf(run) / c1Rate),
      fmtPct(run.usage.nodeCpu),
      fmtPct(run.usage.workersCpu),
      fmtPct(run.usage.mainBusy),
      fmtPct(run.usage.redisCpu),
      fmtPct(run.usage.postgresCpu),
    ];
    const trivialRow = (label: string, run: TrivialRun, rate: number) => [
      label,
      fmtInt(run.records),
      fmtInt(run.jobs),
      run.finished ? fmtSec(run.ms) : `>${fmtSec(run.ms)}`,
      fmtInt(rate),
      fmtRatio(rate / c1Rate),
      fmtPct(run.usage.nodeCpu),
      '-',
      fmtPct(run.usage.mainBusy),
      fmtPct(run.usage.redisCpu),
      '-',
    ];
    console.log(
      table(
        [
          'scenario',
          'records',
          'jobs',
          'seconds',
          'records/s',
          '/ C1',
          'node CPU',
          'workers CPU',
          'main busy',
          'redis CPU',
          'postgres CPU',
        ],
        [
          ...engines.flatMap((e) => [
            pipelineRow(`${e.engine}: A1 BullMQ, 1 worker process`, e.one),
            pipelineRow(`${e.engine}: A2 BullMQ, 2 worker processes`, e.two),
            pipelineRow(`${e.engine}: B  in-process`, e.inProcess),
          ]),
          trivialRow(`C1 trivial BullMQ, ${fmtInt(RECORDS_PER_BATCH)} records/job`, trivialBatched, c1Rate),
          trivialRow('C2 trivial BullMQ, 1 record/job', trivialPerRecord, c2Rate),
        ],
      ),
    );
    console.log(
      '  records: ledger entries written (A, B) or records the completed jobs stood for (C); CPU in % of one core;\n' +
        '  node CPU: this process (the relay in A; everything in B); workers CPU: the worker processes together;\n' +
        "  main busy: event-loop utilisation of this process's main thread; postgres CPU: the PostgreSQL server\n" +
        '  (postmaster and backends; its background writers are in it on the SQLite rows too)',
    );
    console.log(
      `  A, B: timed from start until drain() resolved; jobs = outbox rows (a normalise job per stored batch,\n` +
        `  a ledger job per batch and sink). C: timed from the first addBulk (chunks of ${fmtInt(ADD_CHUNK)}) ` +
        `until the last job completed;\n  adding took ${fmtSec(trivialBatched.addMs)} s (C1), ` +
        `${fmtSec(trivialPerRecord.addMs)} s (C2). Job options: jobOptionsFor of pipeline/retry.ts.`,
    );
    console.log(
      `  setup, not timed: ${fmtInt(total)} postings stored in ` +
        engines.map((e) => `${fmtSec(e.two.setupMs)} s (${e.engine}, A2)`).join(', '),
    );

    console.log('\nchecks');
    for (const e of engines) {
      for (const [label, run] of [
        ['A1', e.one],
        ['A2', e.two],
        ['B', e.inProcess],
      ] as const) {
        const ok = run.finished && ledgerMatches(run) && run.failedJobs === 0;
        console.log(
          `  ${e.engine} ${label}: ledger ${sinkList(run.ledger) || 'empty'}; stored ${sinkList(run.expected)}; ` +
            `failed jobs ${fmtInt(run.failedJobs)}: ${verdictOf(ok, run.finished)}` +
            (run.error !== undefined ? ` (${run.error})` : ''),
        );
      }
    }
    for (const [label, run] of [
      ['C1', trivialBatched],
      ['C2', trivialPerRecord],
    ] as const) {
      const ok = run.finished && run.failedJobs === 0 && run.records === total;
      console.log(
        `  ${label}: ${fmtInt(run.records)} records in completed jobs, failed ${fmtInt(run.failedJobs)}: ` +
          `${verdictOf(ok, run.finished)}${run.error !== undefined ? ` (${run.error})` : ''}`,
      );
    }

    console.log('\nratios');
    for (const e of engines) {
      console.log(
        `  ${e.engine}: A2 / A1 = ${fmtRatio(rateOf(e.two) / rateOf(e.one))} (the second worker process); ` +
          `A2 / C1 = ${fmtRatio(rateOf(e.two) / c1Rate)}; A1 / B = ${fmtRatio(rateOf(e.one) / rateOf(e.inProcess))}`,
      );
    }
    console.log(
      `  C1 is the trivial BullMQ baseline of the same job count; against the cap of a no-op job per record ` +
        `(C2): ${fmtInt(c2Rate)} records/s`,
    );

    console.log('\naim');
    for (const e of engines) {
      const valid = e.two.finished && ledgerMatches(e.two) && e.two.failedJobs === 0;
      const met = valid && rateOf(e.two) >= AIM_RECORDS_PER_SECOND;
      console.log(
        `  ${e.engine} A2: ${fmtInt(rateOf(e.two))} records/s from stored posting to agency ledger on BullMQ ` +
          `with two worker processes (aim >= ${fmtInt(AIM_RECORDS_PER_SECOND)}): ` +
          (met ? 'MET' : valid ? 'NOT MET' : 'NOT MET (run invalid)'),
      );
    }
  } finally {
    await redis?.stop();
    await postgres?.stop();
    cleanupNow();
    clearTimeout(watchdog);
  }
}

if (process.env.BENCH_ROLE === WORKER_ROLE) {
  runWorkerProcess();
} else {
  main().then(
    () => {
      // Anything still holding the event loop (a late scenario) must not keep the benchmark alive.
      setTimeout(() => process.exit(0), 2000).unref();
    },
    (err: unknown) => {
      console.error(err);
      cleanupNow();
      process.exitCode = 1;
      setTimeout(() => process.exit(1), 2000).unref();
    },
  );
}
