/**
 * Checkout benchmark (a report, not a test): hosted checkout and direct merchant callbacks.
 *
 *   npm run bench:checkout                               # 5 s per HTTP scenario, 20,000 callbacks
 *   BENCH_SECONDS=3 BENCH_CALLBACKS=5000 npm run bench:checkout
 *
 * 1. Checkouts/s: a signed POST /v2/checkout (form-encoded, Accept: text/html) that creates an order, until
 *    the hosted checkout page is received: in the POST's answer (200), or, when the POST answers 303 to the
 *    page (post/redirect/get), from the GET that follows it. Closed loop over 16 keep-alive connections for
 *    BENCH_SECONDS after a 1 s warm-up, beside the no-op GET /api/version on the same server with the same
 *    client. The client is a child process (this file, forked with --load-client): it signs each order with
 *    signPost just before sending it (the merchant's cost, and a fresh exp). Aim: >= 1,500 checkouts/s. The
 *    same two scenarios then run on a throwaway PostgreSQL (bench/postgres.ts), each beside its own no-op.
 * 2. Direct callbacks/s: N paid orders are made through the store (createOrder, startAttempt, settleOrder:
 *    each queues its callback to a local receiver), then createInProcessRuntime(deps).drain() is timed until
 *    all N are delivered. The receiver is a node:http server in a child process (this file, forked with
 *    --receiver) that verifies each signature and answers 200. Baseline: N plain undici POSTs of the same
 *    signed form body to the same receiver, 32 at a time (the callback job's concurrency), from this
 *    process, once before the delivery and once after it, taken as one (the machine's speed drifts within a
 *    run). Aim: >= 3,000 callbacks/s, and (issue 17) >= 0.25 of the baseline. The same N then run on
 *    the PostgreSQL, each beside a baseline of its own, before and after: by the in-process runtime of this
 *    process, and by two worker processes (bin/worker.ts: BullMQ relay and workers) on one Redis
 *    (bench/callbacks-pg.ts).
 *
 * The paid orders are made on a copy of the store in /dev/shm (when there is one) and the file is then
 * copied to the temp dir on disk, where the delivery is timed: making them runs the real store code, but
 * with synchronous=FULL on disk it would cost three fsyncs per order and most of the run. Unless
 * BENCH_CALLBACKS is set, N is lowered when a warm-up delivery shows that N would take more than
 * DRAIN_BUDGET_SECONDS, to keep the run near two minutes. Always exits 0 when the benchmark ran, whether
 * or not the aims are met.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { Agent, Pool, request } from 'undici';
import { createDeps, seedDemoData } from '../core/bootstrap.ts';
import type { Deps } from '../core/deps.ts';
import { listen, type Listening } from '../core/http/serve.ts';
import { signCallback, signPost, verifyCallback } from '../core/signatures.ts';
import { createWebApp } from '../bin/create-app.ts';
import { createInProcessRuntime } from '../pipeline/in-process-runtime.ts';
import { fmtInt, fmtMs, fmtPct, fmtRatio, percentile, table } from './format.ts';
import { startBenchPostgres } from './postgres.ts';
import { payOrders, type SettleTimes } from './paid-orders.ts';
import {
  checkPgCallbacks,
  holdBackCallbacks,
  timeWorkers,
  withoutDurableCommits,
  type PgCallbackCheck,
} from './callbacks-pg.ts';
import { startRedis } from './redis.ts';
import { openPgStore } from '../core/store/pg/index.ts';
import pg from 'pg';

const HOST = '127.0.0.1';
const LZS_KEY = 'c3b5a0e2-7f1d-4c8e-9a6b-2d4f8e1a3b5c'; // fixtures/demo/seed.json
const CONNECTIONS = 16;
const WARMUP_SECONDS = 1;
/** The callback job's concurrency (pipeline/jobs/callback.ts), used for the baseline too. */
const CALLBACK_CONCURRENCY = 32;
const RELAY_WARMUP_CALLBACKS = 500;
/**
 * Callbacks the PostgreSQL worker processes deliver before the timed run (not timed): they start cold, and
 * a deployment's workers run for days.
 */
const WORKERS_WARMUP_CALLBACKS = 2000;
/**
 * The worker processes deliver the warm-up's callbacks this many times before the clock starts: new
 * processes, where the in-process runs are timed in this one, warm from the scenarios before them. After one
 * round (1,000 callbacks a worker) V8 had not yet optimised the delivery path: the workers took 630 us of CPU
 * per callback, against 541 us after 8,000 deliveries.
 */
const WORKERS_WARMUP_ROUNDS = 4;
const BASELINE_WARMUP_POSTS = 500;
/** Without BENCH_CALLBACKS, N is lowered so that the timed delivery should take about this long at most. */
const DRAIN_BUDGET_SECONDS = 60;
/** A delivery still running after this long is reported as such, and the run ends. */
const DRAIN_LIMIT_SECONDS = 180;
const AIM_CHECKOUTS_PER_SECOND = 1500;
const AIM_CALLBACKS_PER_SECOND = 3000;
/** The aim of issue 17: callbacks/s at least this fraction of the raw undici baseline of the same run. */
const AIM_CALLBACK_RATIO = 0.25;
/** Worker processes (BullMQ relay and workers) of the PostgreSQL multi-worker callback scenario. */
const PG_WORKERS = 2;
const LOAD_CLIENT_ROLE = '--load-client';
const RECEIVER_ROLE = '--receiver';
const REQUEST_TIMEOUT_MS = 60_000;

function envNumber(name: string, fallback: number, min: number, max: number, integer: boolean): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw.trim());
  if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw new Error(
      `${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max} (got "${raw}")`,
    );
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------
// Child processes: the load client and the merchant's receiver (this file, forked with a role argument)

interface LoadRequest {
  origin: string;
  kind: 'checkout' | 'noop';
  connections: number;
  warmupSeconds: number;
  seconds: number;
}

interface LoadResult {
  /** Measured requests answered as expected (200, and the checkout page for checkouts). */
  ok: number;
  requests: number;
  /** Checkouts whose POST answered 303 to the checkout page, which was then fetched (post/redirect/get). */
  redirected: number;
  errors: number;
  firstError?: string;
  /** Answered as expected during warm-up (not measured; orders made all the same). */
  warmupOk: number;
  elapsedMs: number;
  latenciesMs: Float64Array;
  /** CPU the client used during the measured phase, in % of one core. */
  clientCpuPercent: number;
  /** signPost per checkout in the client, in microseconds (0 for the no-op). */
  signMicros: number;
}

interface ReceiverStats {
  requests: number;
  /** Distinct orderNo values received. */
  orders: number;
  badSignatures: number;
}

type Answer<T> = { ok: true; result: T } | { ok: false; error: string };

async function runLoad(req: LoadRequest): Promise<LoadResult> {
  const pool = new Pool(req.origin, {
    connections: req.connections,
    pipelining: 1,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  let seq = 0;
  const refPrefix = `BENCH-${process.pid}-${Date.now().toString(36)}-`;
  try {
    const phase = async (seconds: number) => {
      const result = {
        ok: 0,
        requests: 0,
        errors: 0,
        redirected: 0,
        firstError: undefined as string | undefined,
      };
      const latencies: number[] = [];
      let signMs = 0;
      const fail = (message: string) => {
        result.errors += 1;
        result.firstError ??= message;
      };
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      const deadline = started + seconds * 1000;
      const user = async () => {
        while (performance.now() < deadline) {
          let options: Parameters<Pool['request']>[0];
          const s0 = performance.now();
          if (req.kind === 'checkout') {
            // Signed just before sending: the merchant's cost, and exp is fresh.
            const { body } = signPost(
              {
                agency: 'LZS',
                refNo: `${refPrefix}${(seq += 1)}`,
                amount: '10.00',
                email: 'ali@example.my',
                returnUrl: 'http://127.0.0.1:9/return',
              },
              LZS_KEY,
            );
            options = {
              method: 'POST',
              path: '/v2/checkout',
              headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
              body,
            };
          } else {
            options = { method: 'GET', path: '/api/version' };
          }
          const t0 = performance.now();
          signMs += t0 - s0;
          try {
            const res = await pool.request(options);
            let status = res.statusCode;
            let text = await res.body.text();
            const location = res.headers.location;
            if (req.kind === 'checkout' && status === 303 && typeof location === 'string') {
              // Post/redirect/get: the order is made by the POST, its page comes from the GET a browser follows with.
              const target = new URL(location, req.origin);
              const page = await pool.request({
                method: 'GET',
                path: `${target.pathname}${target.search}`,
                headers: { accept: 'text/html' },
              });
              status = page.statusCode;
              text = await page.body.text();
              result.redirected += 1;
            }
            latencies.push(performance.now() - t0);
            result.requests += 1;
            if (status !== 200) fail(`HTTP ${status}: ${text.slice(0, 300)}`);
            else if (req.kind === 'checkout' && !text.includes('Pay now')) {
              fail(`no 'Pay now' in the page: ${text.slice(0, 300)}`);
            } else result.ok += 1;
          } catch (err) {
            result.requests += 1;
            fail(err instanceof Error ? err.message : String(err));
          }
        }
      };
      await Promise.all(Array.from({ length: req.connections }, user));
      const ms = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      return { ...result, latencies, ms, cpuPercent: (cpu.user + cpu.system) / 10 / ms, signMs };
    };
    const warmup = await phase(req.warmupSeconds);
    const measured = await phase(req.seconds);
    const firstError = measured.firstError ?? warmup.firstError;
    return {
      ok: measured.ok,
      requests: measured.requests,
      redirected: measured.redirected,
      errors: measured.errors + warmup.errors,
      ...(firstError !== undefined && { firstError }),
      warmupOk: warmup.ok,
      elapsedMs: measured.ms,
      latenciesMs: Float64Array.from(measured.latencies),
      clientCpuPercent: measured.cpuPercent,
      signMicros: req.kind === 'checkout' ? (1000 * measured.signMs) / Math.max(1, measured.requests) : 0,
    };
  } finally {
    await pool.close();
  }
}

function loadClientRole(send: (message: unknown) => void): void {
  process.on('message', (message: LoadRequest) => {
    runLoad(message).then(
      (result) => send({ ok: true, result } satisfies Answer<LoadResult>),
      (err: unknown) =>
        send({
          ok: false,
          error: err instanceof Error ? (err.stack ?? err.message) : String(err),
        } satisfies Answer<LoadResult>),
    );
  });
}

/** A merchant's callback receiver: verifies each callback's signature (as a merchant must), answers 200. */
function receiverRole(send: (message: unknown) => void): void {
  let stats = { requests: 0, badSignatures: 0 };
  let orders = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      stats.requests += 1;
      if (!verifyCallback(form, LZS_KEY)) stats.badSignatures += 1;
      orders.add(form.get('orderNo') ?? '');
      res.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, HOST, () => {
    const { port } = server.address() as AddressInfo;
    send({ ok: true, result: `http://${HOST}:${port}` } satisfies Answer<string>);
  });
  // Each message asks for the counts since the last one: 'take' resets them, 'peek' does not.
  process.on('message', (message) => {
    const result: ReceiverStats = { ...stats, orders: orders.size };
    if (message !== 'peek') {
      stats = { requests: 0, badSignatures: 0 };
      orders = new Set();
    }
    send({ ok: true, result } satisfies Answer<ReceiverStats>);
  });
}

function startChild(role: string): ChildProcess {
  // fork keeps process.execArgv, which carries tsx's loader, so the child runs TypeScript too.
  return fork(new URL(import.meta.url), [role], { serialization: 'advanced' });
}

/** The child's next answer (sending `message` first, if given). */
function ask<T>(child: ChildProcess, message?: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (answer: Answer<T>) => {
      cleanup();
      if (answer.ok) resolve(answer.result);
      else reject(new Error(`child process failed: ${answer.error}`));
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`child process exited (code ${String(code)})`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
    if (message !== undefined) child.send(message as object);
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill(), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    if (child.connected) child.disconnect();
    else child.kill();
  });
}

// ---------------------------------------------------------------------------------------------------
// Statistics and formatting

// ---------------------------------------------------------------------------------------------------
// Figure 1: checkouts per second

interface HttpScenario {
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  /** Event-loop utilisation of the server's thread (this one) over the scenario, warm-up included. */
  serverBusyPercent: number;
  /** CPU of this process over the scenario, in % of one core (busy but not CPU: waiting, e.g. on fsync). */
  serverCpuPercent: number;
  result: LoadResult;
}

async function httpScenario(client: ChildProcess, request: LoadRequest): Promise<HttpScenario> {
  const before = performance.eventLoopUtilization();
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const result = await ask<LoadResult>(client, request);
  const busy = performance.eventLoopUtilization(before).utilization * 100;
  const used = process.cpuUsage(cpu);
  const serverCpuPercent = (used.user + used.system) / 10 / (performance.now() - t0);
  const sorted = Float64Array.from(result.latenciesMs).sort();
  return {
    perSecond: result.ok / (result.elapsedMs / 1000),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: percentile(sorted, 100),
    serverBusyPercent: busy,
    serverCpuPercent,
    result,
  };
}

// ---------------------------------------------------------------------------------------------------
// Figure 2: direct callbacks per second

/**
 * Makes `count` paid orders whose direct callback goes to `callbackUrl`, through the store as checkout and
 * the acquirer's result would (createOrder, startAttempt, settleOrder), in a scratch data dir (in /dev/shm
 * when there is one); then copies the closed database into `dataDir`.
 */
async function makePaidOrders(
  scratchDir: string,
  dataDir: string,
  callbackUrl: string,
  count: number,
): Promise<{ ms: number; settleFirstUs: number; settleLastUs: number; sampled: number }> {
  const deps = createDeps({ DATA_DIR: scratchDir, LOG_LEVEL: 'silent', SEED_DEMO: 'true', HOST, PORT: '0' });
  const t0 = performance.now();
  let times: SettleTimes;
  try {
    times = await payOrders(deps, callbackUrl, count, { prefix: 'CB-' });
  } finally {
    await deps.store.close();
    await deps.callbacks.close();
  }
  // Closing the only connection checkpoints the WAL into the main file; copy a left-over WAL all the same.
  for (const suffix of ['', '-wal']) {
    const from = path.join(scratchDir, `amil.db${suffix}`);
    if (existsSync(from)) copyFileSync(from, path.join(dataDir, `amil.db${suffix}`));
  }
  rmSync(scratchDir, { recursive: true, force: true });
  const us = (ms: number) => (1000 * ms) / Math.max(1, times.sampled);
  return {
    ms: performance.now() - t0,
    settleFirstUs: us(times.settleFirstMs),
    settleLastUs: us(times.settleLastMs),
    sampled: times.sampled,
  };
}

interface Delivery {
  ms: number;
  busyPercent: number;
  cpuPercent: number;
  timedOut: boolean;
  error?: string;
}

/** Times createInProcessRuntime(deps).drain() until the outbox has nothing ready (or the limit passes). */
async function timeDrain(deps: Deps, limitSeconds: number): Promise<Delivery> {
  const relay = createInProcessRuntime(deps);
  const elu = performance.eventLoopUtilization();
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let error: string | undefined;
  const drained = relay.drain().then(
    () => false,
    (err: unknown) => {
      error = err instanceof Error ? err.message : String(err);
      return false;
    },
  );
  const limit = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), limitSeconds * 1000);
  });
  const timedOut = await Promise.race([drained, limit]);
  clearTimeout(timer);
  const ms = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  return {
    ms,
    busyPercent: performance.eventLoopUtilization(elu).utilization * 100,
    cpuPercent: (used.user + used.system) / 10 / ms,
    timedOut,
    ...(error !== undefined && { error }),
  };
}

interface Baseline {
  /** POSTs sent, and the rate of each run it was made of (one, or the runs before and after a delivery). */
  posts: number;
  runs: number[];
  ms: number;
  errors: number;
  firstError?: string;
  cpuPercent: number;
}

/** `count` plain undici POSTs of `body` to `url`, `concurrency` at a time, on a fresh Agent. */
async function plainPosts(url: string, body: string, count: number, concurrency: number): Promise<Baseline> {
  const dispatcher = new Agent({ headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS });
  let sent = 0;
  let errors = 0;
  let firstError: string | undefined;
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  try {
    const sender = async () => {
      while (sent < count) {
        sent += 1;
        try {
          const res = await request(url, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body,
            dispatcher,
          });
          await res.body.text();
          if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
        } catch (err) {
          errors += 1;
          firstError ??= err instanceof Error ? err.message : String(err);
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, sender));
  } finally {
    await dispatcher.close();
  }
  const ms = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  return {
    posts: count,
    runs: [(count - errors) / (ms / 1000)],
    ms,
    errors,
    ...(firstError !== undefined && { firstError }),
    cpuPercent: (used.user + used.system) / 10 / ms,
  };
}

/** POSTs a second, over all the runs of a baseline. */
const perSecondOf = (b: Baseline) => (b.posts - b.errors) / (b.ms / 1000);

/**
 * A baseline taken before a delivery and again after it, as one: this machine's speed drifts within a run
 * (one baseline once measured 2,199/s minutes after another's 4,863/s), so a ratio to one taken only
 * before says as much about the moment as about the code.
 */
function bracketing(before: Baseline, after: Baseline): Baseline {
  const ms = before.ms + after.ms;
  return {
    posts: before.posts + after.posts,
    runs: [...before.runs, ...after.runs],
    ms,
    errors: before.errors + after.errors,
    ...((before.firstError ?? after.firstError) !== undefined && {
      firstError: before.firstError ?? after.firstError,
    }),
    cpuPercent: (before.cpuPercent * before.ms + after.cpuPercent * after.ms) / ms,
  };
}

interface CallbackCheck {
  states: Record<string, number>;
  attempts: number;
  outboxLeft: number;
}

function checkCallbacks(file: string): CallbackCheck {
  const db = new Database(file, { readonly: true });
  try {
    const states: Record<string, number> = {};
    for (const row of db
      .prepare<[], { state: string; n: number }>('SELECT state, count(*) AS n FROM callbacks GROUP BY state')
      .all()) {
      states[row.state] = row.n;
    }
    const n = (sql: string) => db.prepare<[], { n: number }>(sql).get()?.n ?? 0;
    return {
      states,
      attempts: n('SELECT count(*) AS n FROM callback_attempts'),
      outboxLeft: n('SELECT count(*) AS n FROM outbox WHERE sent_at IS NULL'),
    };
  } finally {
    db.close();
  }
}

/** Diagnostic: single-row transactions per second on this disk with the store's pragmas (WAL, FULL). */
function durableCommitsPerSecond(dir: string, seconds: number): number {
  const db = new Database(path.join(dir, 'commits.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, at TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO t (at) VALUES (?)');
    const commit = db.transaction(() => insert.run(new Date().toISOString()));
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < seconds * 1000) {
      commit.immediate();
      n += 1;
    }
    return n / ((performance.now() - t0) / 1000);
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------------------------------------------

/** Resolves true when work was left running (a delivery past its limit): the process must then exit. */
async function main(): Promise<boolean> {
  const seconds = envNumber('BENCH_SECONDS', 5, 1, 600, false);
  const callbacksSet = (process.env.BENCH_CALLBACKS ?? '').trim() !== '';
  let callbacks = envNumber('BENCH_CALLBACKS', 20_000, 100, 1_000_000, true);
  const tempDirs: string[] = [];
  const tempDir = (prefix: string, base = tmpdir()) => {
    const dir = mkdtempSync(path.join(base, prefix));
    tempDirs.push(dir);
    return dir;
  };
  const scratchBase = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const openDeps: Deps[] = [];
  const stops: (() => Promise<void>)[] = [];
  const depsIn = (dir: string, engine: Record<string, string> = {}, overrides: Partial<Deps> = {}) => {
    // One load client at 127.0.0.1 stands for many payers: the per-client page limit is off here.
    const deps = createDeps(
      {
        DATA_DIR: dir,
        LOG_LEVEL: 'silent',
        SEED_DEMO: 'true',
        HOST,
        PORT: '0',
        RATE_LIMIT_PAGES_PER_MINUTE: '0',
        ...engine,
      },
      overrides,
    );
    openDeps.push(deps);
    return deps;
  };
  const closeDeps = async (deps: Deps) => {
    openDeps.splice(openDeps.indexOf(deps), 1);
    await deps.store.close();
    await deps.callbacks.close();
  };
  let listening: Listening | undefined;
  let client: ChildProcess | undefined;
  let receiver: ChildProcess | undefined;

  try {
    console.log(
      `amil checkout benchmark: ${seconds} s per HTTP scenario (+${WARMUP_SECONDS} s warm-up), ` +
        `${CONNECTIONS} connections; ${fmtInt(callbacks)} callbacks${callbacksSet ? ' (BENCH_CALLBACKS)' : ''}; ` +
        `Node ${process.version}; data in ${tmpdir()}, orders made in ${scratchBase}`,
    );
    client = startChild(LOAD_CLIENT_ROLE);
    receiver = startChild(RECEIVER_ROLE);
    const receiverUrl = await ask<string>(receiver);
    const callbackUrl = `${receiverUrl}/callback`;

    // -- 1. checkouts ---------------------------------------------------------------------------------
    const webDir = tempDir('amil-bench-checkout-');
    const web = depsIn(webDir);
    await seedDemoData(web.store, new Date());
    listening = await listen([
      { name: 'web', app: createWebApp(web, ['base', 'reports', 'pay']), host: HOST, port: 0 },
    ]);
    const url = listening.servers[0]?.url;
    if (!url) throw new Error('server did not start');
    const base = { origin: url, connections: CONNECTIONS, warmupSeconds: WARMUP_SECONDS, seconds };
    process.stdout.write('  1. no-op GET /api/version...');
    const noop = await httpScenario(client, { ...base, kind: 'noop' });
    process.stdout.write(' POST /v2/checkout...');
    const checkout = await httpScenario(client, { ...base, kind: 'checkout' });
    process.stdout.write(' done\n');
    await listening.close(1000);
    listening = undefined;
    // The same two scenarios on PostgreSQL, with the same client, in the same run (issue 17).
    process.stdout.write('     on PostgreSQL: starting it...');
    const pgServer = await startBenchPostgres();
    stops.push(pgServer.stop);
    const pgStore = openPgStore(pgServer.url);
    const pgWeb = depsIn(webDir, { DATABASE_URL: pgServer.url }, { store: pgStore });
    await seedDemoData(pgWeb.store, new Date());
    listening = await listen([
      { name: 'web', app: createWebApp(pgWeb, ['base', 'reports', 'pay']), host: HOST, port: 0 },
    ]);
    const pgBase = { ...base, origin: listening.servers[0]?.url ?? '' };
    process.stdout.write(' no-op GET /api/version...');
    const pgNoop = await httpScenario(client, { ...pgBase, kind: 'noop' });
    process.stdout.write(' POST /v2/checkout...');
    const pgCheckout = await httpScenario(client, { ...pgBase, kind: 'checkout' });
    process.stdout.write(' done\n');
    await stopChild(client);
    await listening.close(1000);
    listening = undefined;
    const pgOrdersMade = await (async () => {
      const db = new pg.Client({ connectionString: pgServer.url });
      await db.connect();
      try {
        const { rows } = await db.query<{ n: string }>(
          `SELECT count(*) AS n FROM payments WHERE agency_code = 'LZS' AND ref_no LIKE 'BENCH-%'`,
        );
        return Number(rows[0]?.n ?? 0);
      } finally {
        await db.end();
      }
    })();
    await closeDeps(pgWeb);
    const ordersMade = (() => {
      const db = new Database(web.config.databaseFile, { readonly: true });
      try {
        return (
          db
            .prepare<[], { n: number }>(
              `SELECT count(*) AS n FROM payments WHERE agency_code = 'LZS' AND ref_no LIKE 'BENCH-%'`,
            )
            .get()?.n ?? 0
        );
      } finally {
        db.close();
      }
    })();
    await closeDeps(web);

    process.stdout.write('     durable commits of this disk (diagnostic)...');
    const commitsPerSecond = durableCommitsPerSecond(tempDir('amil-bench-commits-'), 1);
    process.stdout.write(` ${fmtInt(commitsPerSecond)}/s\n`);

    // -- 2. callbacks ---------------------------------------------------------------------------------
    // Warm-up: a few hundred callbacks through the same code on a throwaway store (not measured). It
    // also tells how long N would take, to keep the run bounded when BENCH_CALLBACKS is not set.
    process.stdout.write(`  2. relay warm-up, ${RELAY_WARMUP_CALLBACKS} callbacks...`);
    const warmDir = tempDir('amil-bench-callbacks-warm-');
    await makePaidOrders(
      tempDir('amil-bench-orders-', scratchBase),
      warmDir,
      callbackUrl,
      RELAY_WARMUP_CALLBACKS,
    );
    const warm = depsIn(warmDir);
    const warmDrain = await timeDrain(warm, DRAIN_LIMIT_SECONDS);
    await closeDeps(warm);
    const warmStats = await ask<ReceiverStats>(receiver, 'take');
    if (
      warmDrain.timedOut ||
      warmDrain.error !== undefined ||
      warmStats.requests !== RELAY_WARMUP_CALLBACKS
    ) {
      throw new Error(
        `relay warm-up: ${warmStats.requests} of ${RELAY_WARMUP_CALLBACKS} callbacks arrived` +
          (warmDrain.timedOut ? ` within ${DRAIN_LIMIT_SECONDS} s` : '') +
          (warmDrain.error !== undefined ? ` (drain failed: ${warmDrain.error})` : ''),
      );
    }
    const warmRate = RELAY_WARMUP_CALLBACKS / (warmDrain.ms / 1000);
    process.stdout.write(` ${fmtInt(warmRate)}/s\n`);
    let lowered: string | undefined;
    if (!callbacksSet && callbacks / warmRate > DRAIN_BUDGET_SECONDS) {
      const fitting = Math.max(1000, Math.floor((warmRate * DRAIN_BUDGET_SECONDS) / 1000) * 1000);
      lowered =
        `N lowered from ${fmtInt(callbacks)} to ${fmtInt(fitting)}: at the warm-up's ${fmtInt(warmRate)}/s ` +
        `the delivery would take ${fmtInt(callbacks / warmRate)} s (set BENCH_CALLBACKS to insist)`;
      callbacks = fitting;
      console.log(`     ${lowered}`);
    }

    process.stdout.write(`     making ${fmtInt(callbacks)} paid orders (not timed)...`);
    const cbDir = tempDir('amil-bench-callbacks-');
    const made = await makePaidOrders(
      tempDir('amil-bench-orders-', scratchBase),
      cbDir,
      callbackUrl,
      callbacks,
    );
    process.stdout.write(` ${(made.ms / 1000).toFixed(1)} s (${fmtInt(callbacks / (made.ms / 1000))}/s)\n`);
    const cb = depsIn(cbDir);
    // The baseline body: the first callback's own fields, signed as the callback job signs them.
    const [sample] = await cb.store.callbacks.list({ limit: 1 });
    if (!sample) throw new Error('no callback was queued');
    const sampleFields = JSON.parse(sample.fields) as Record<string, string>;
    const baselineBody = new URLSearchParams({
      ...sampleFields,
      signature: signCallback(sampleFields, LZS_KEY),
    }).toString();

    process.stdout.write(
      `     baseline: ${fmtInt(callbacks)} plain undici POSTs, ${CALLBACK_CONCURRENCY} at once...`,
    );
    await plainPosts(callbackUrl, baselineBody, BASELINE_WARMUP_POSTS, CALLBACK_CONCURRENCY);
    await ask<ReceiverStats>(receiver, 'take');
    const baselineBefore = await plainPosts(callbackUrl, baselineBody, callbacks, CALLBACK_CONCURRENCY);
    const baselineStats = await ask<ReceiverStats>(receiver, 'take');
    process.stdout.write(' relay drain...');
    const delivery = await timeDrain(cb, DRAIN_LIMIT_SECONDS);
    if (delivery.timedOut) {
      console.log(
        `\n  ! the delivery did not finish within ${DRAIN_LIMIT_SECONDS} s: partial figures, run ends`,
      );
    }
    if (delivery.error !== undefined) console.log(`\n  ! the drain failed: ${delivery.error}`);
    const deliveryStats = await ask<ReceiverStats>(receiver, 'take');
    const check = delivery.timedOut ? undefined : checkCallbacks(cb.config.databaseFile);
    process.stdout.write(' baseline again...');
    const baseline = bracketing(
      baselineBefore,
      await plainPosts(callbackUrl, baselineBody, callbacks, CALLBACK_CONCURRENCY),
    );
    const baselineAfterStats = await ask<ReceiverStats>(receiver, 'take');
    process.stdout.write(' done\n\n');

    // -- 2b. callbacks on PostgreSQL ---------------------------------------------------------------
    // The same N on the benchmark's PostgreSQL: (a) the in-process runtime of this process, (b) worker
    // processes (the BullMQ relay and workers) on one Redis. Each beside a baseline taken before and after.
    process.stdout.write(`     on PostgreSQL: making ${fmtInt(callbacks)} paid orders (not timed)...`);
    const pgMade0 = performance.now();
    await withoutDurableCommits(pgServer.url, async () => {
      const maker = depsIn(
        tempDir('amil-bench-pg-orders-'),
        { DATABASE_URL: pgServer.url },
        {
          store: openPgStore(pgServer.url),
        },
      );
      await payOrders(maker, callbackUrl, callbacks, { prefix: 'CB-', seeded: true });
      await closeDeps(maker);
    });
    process.stdout.write(` ${((performance.now() - pgMade0) / 1000).toFixed(1)} s; baseline...`);
    const pgBaselineBefore = await plainPosts(callbackUrl, baselineBody, callbacks, CALLBACK_CONCURRENCY);
    await ask<ReceiverStats>(receiver, 'take');
    process.stdout.write(' in-process drain...');
    const pgCb = depsIn(
      tempDir('amil-bench-pg-cb-'),
      { DATABASE_URL: pgServer.url },
      {
        store: openPgStore(pgServer.url),
      },
    );
    const pgDelivery = await timeDrain(pgCb, DRAIN_LIMIT_SECONDS);
    const pgDeliveryStats = await ask<ReceiverStats>(receiver, 'take');
    const pgCheck = pgDelivery.timedOut ? undefined : await checkPgCallbacks(pgServer.url);
    await closeDeps(pgCb);
    const pgBaseline = bracketing(
      pgBaselineBefore,
      await plainPosts(callbackUrl, baselineBody, callbacks, CALLBACK_CONCURRENCY),
    );
    await ask<ReceiverStats>(receiver, 'take');
    process.stdout.write(` done\n     on PostgreSQL with ${PG_WORKERS} worker processes: making orders...`);
    await withoutDurableCommits(pgServer.url, async () => {
      const maker = depsIn(
        tempDir('amil-bench-pg-orders-'),
        { DATABASE_URL: pgServer.url },
        {
          store: openPgStore(pgServer.url),
        },
      );
      await payOrders(maker, callbackUrl, callbacks, { prefix: 'CBW-', seeded: true });
      await holdBackCallbacks(pgServer.url);
      // Not held back: the worker processes deliver these first, untimed, so the timed run finds them warm.
      await payOrders(maker, callbackUrl, WORKERS_WARMUP_CALLBACKS, { prefix: 'CBWW-', seeded: true });
      await closeDeps(maker);
    });
    process.stdout.write(' baseline...');
    const pgWorkersBaselineBefore = await plainPosts(
      callbackUrl,
      baselineBody,
      callbacks,
      CALLBACK_CONCURRENCY,
    );
    await ask<ReceiverStats>(receiver, 'take');
    process.stdout.write(' redis-server and workers...');
    const redis = await startRedis(tempDir('amil-bench-redis-'));
    stops.push(() => redis.stop());
    const callbackReceiver = receiver;
    const workersDelivery = await timeWorkers({
      databaseUrl: pgServer.url,
      redisUrl: redis.url,
      dataDir: tempDir('amil-bench-pg-workers-'),
      workers: PG_WORKERS,
      warmupRounds: WORKERS_WARMUP_ROUNDS,
      limitSeconds: DRAIN_LIMIT_SECONDS,
      postgresPid: pgServer.pid,
      redisPid: redis.pid,
      // The warm-up's callbacks are not counted at the receiver.
      warmedUp: () => ask<ReceiverStats>(callbackReceiver, 'take'),
      expected: callbacks,
      arrived: async () => (await ask<ReceiverStats>(callbackReceiver, 'peek')).orders,
    });
    const workersStats = await ask<ReceiverStats>(receiver, 'take');
    const workersCheck = workersDelivery.timedOut ? undefined : await checkPgCallbacks(pgServer.url);
    const pgWorkersBaseline = bracketing(
      pgWorkersBaselineBefore,
      await plainPosts(callbackUrl, baselineBody, callbacks, CALLBACK_CONCURRENCY),
    );
    await ask<ReceiverStats>(receiver, 'take');
    process.stdout.write(' done\n\n');

    // -- the report -----------------------------------------------------------------------------------
    console.log(
      `1. checkouts: closed loop, ${CONNECTIONS} connections, ${seconds} s after ${WARMUP_SECONDS} s warm-up, ` +
        `load client in a child process; checkout = signed POST /v2/checkout (Accept: text/html) until the ` +
        `checkout page is received (200, 'Pay now')`,
    );
    // Each engine's figures beside its own no-op, measured on the same server moments before.
    const httpRowOf = (noop: HttpScenario) => (name: string, s: HttpScenario) => [
      name,
      fmtInt(s.perSecond),
      fmtRatio(s.perSecond / noop.perSecond),
      fmtMs(s.p50),
      fmtMs(s.p99),
      fmtMs(s.max),
      fmtInt(s.result.ok),
      fmtPct(s.serverBusyPercent),
      fmtPct(s.serverCpuPercent),
      fmtPct(s.result.clientCpuPercent),
      String(s.result.errors),
    ];
    const httpRow = httpRowOf(noop);
    console.log(
      table(
        [
          'scenario',
          'per s',
          '/ no-op',
          'p50 ms',
          'p99 ms',
          'max ms',
          'answered',
          'server busy',
          'server CPU',
          'client CPU',
          'errors',
        ],
        [
          httpRow('SQLite: POST /v2/checkout', checkout),
          httpRow('SQLite: no-op GET /api/version', noop),
          httpRowOf(pgNoop)('PostgreSQL: POST /v2/checkout', pgCheckout),
          httpRowOf(pgNoop)('PostgreSQL: no-op GET /api/version', pgNoop),
        ],
      ),
    );
    for (const [name, s] of [
      ['checkout', checkout],
      ['no-op', noop],
      ['PostgreSQL checkout', pgCheckout],
      ['PostgreSQL no-op', pgNoop],
    ] as const) {
      if (s.result.firstError !== undefined) {
        console.log(`  ! ${name}: ${s.result.errors} error(s), first: ${s.result.firstError}`);
      }
    }
    const checkoutAnswered = checkout.result.ok + checkout.result.warmupOk;
    console.log(
      checkout.result.redirected > 0
        ? `  ${fmtInt(checkout.result.redirected)} of ${fmtInt(checkout.result.requests)} POSTs answered 303 to the ` +
            `checkout page (post/redirect/get): those checkouts are the POST plus the GET a browser follows with, ` +
            `both in the latency`
        : `  every POST answered with the page itself (no redirect)`,
    );
    console.log(
      `  signPost in the client: ${checkout.result.signMicros.toFixed(1)} us per checkout; server busy = ` +
        `event-loop utilisation of the server's thread, server CPU = its process's CPU (both warm-up ` +
        `included; busy without CPU is waiting, e.g. on fsync); CPU in % of one core`,
    );
    console.log(
      `  check: ${fmtInt(ordersMade)} benchmark orders stored, ${fmtInt(checkoutAnswered)} checkout pages ` +
        `answered (warm-up included): ${ordersMade === checkoutAnswered ? 'consistent' : 'MISMATCH'}`,
    );
    const pgAnswered = pgCheckout.result.ok + pgCheckout.result.warmupOk;
    console.log(
      `  check (PostgreSQL): ${fmtInt(pgOrdersMade)} benchmark orders stored, ${fmtInt(pgAnswered)} checkout ` +
        `pages answered (warm-up included): ${pgOrdersMade === pgAnswered ? 'consistent' : 'MISMATCH'}`,
    );
    console.log(
      `  diagnostic: this disk commits ${fmtInt(commitsPerSecond)} single-row transactions/s with the ` +
        `store's pragmas (WAL, synchronous=FULL), on one thread`,
    );

    const relayPerSecond = deliveryStats.requests / (delivery.ms / 1000);
    const baselinePerSecond = perSecondOf(baseline);
    const pgRelayPerSecond = pgDeliveryStats.requests / (pgDelivery.ms / 1000);
    const pgBaselinePerSecond = perSecondOf(pgBaseline);
    const workersPerSecond = workersStats.requests / (workersDelivery.ms / 1000);
    const pgWorkersBaselinePerSecond = perSecondOf(pgWorkersBaseline);
    const baselineRow = (b: Baseline, received: number, badSignatures: number) => [
      `  baseline: undici POST, ${CALLBACK_CONCURRENCY} at once`,
      fmtInt(perSecondOf(b)),
      '1.00',
      (b.ms / 1000).toFixed(2),
      fmtInt(received),
      '-',
      String(badSignatures),
      '-',
      fmtPct(b.cpuPercent),
      String(b.errors),
    ];
    console.log(
      `\n2. direct callbacks: ${fmtInt(callbacks)} paid orders, each with its callback queued to a receiver in a ` +
        `child process (verifies the signature, answers 200)`,
    );
    console.log(
      table(
        [
          'scenario',
          'per s',
          '/ baseline',
          'seconds',
          'received',
          'orders',
          'bad sig',
          'main busy',
          'main CPU',
          'errors',
        ],
        [
          [
            'SQLite: relay drain (callback job, 32 at once)',
            fmtInt(relayPerSecond),
            fmtRatio(relayPerSecond / baselinePerSecond),
            (delivery.ms / 1000).toFixed(2),
            fmtInt(deliveryStats.requests),
            fmtInt(deliveryStats.orders),
            String(deliveryStats.badSignatures),
            fmtPct(delivery.busyPercent),
            fmtPct(delivery.cpuPercent),
            '-',
          ],
          baselineRow(
            baseline,
            baselineStats.requests + baselineAfterStats.requests,
            baselineStats.badSignatures + baselineAfterStats.badSignatures,
          ),
          [
            'PostgreSQL: relay drain, in-process',
            fmtInt(pgRelayPerSecond),
            fmtRatio(pgRelayPerSecond / pgBaselinePerSecond),
            (pgDelivery.ms / 1000).toFixed(2),
            fmtInt(pgDeliveryStats.requests),
            fmtInt(pgDeliveryStats.orders),
            String(pgDeliveryStats.badSignatures),
            fmtPct(pgDelivery.busyPercent),
            fmtPct(pgDelivery.cpuPercent),
            '-',
          ],
          baselineRow(pgBaseline, pgBaseline.posts - pgBaseline.errors, 0),
          [
            `PostgreSQL: ${PG_WORKERS} worker processes (leased)`,
            fmtInt(workersPerSecond),
            fmtRatio(workersPerSecond / pgWorkersBaselinePerSecond),
            (workersDelivery.ms / 1000).toFixed(2),
            fmtInt(workersStats.requests),
            fmtInt(workersStats.orders),
            String(workersStats.badSignatures),
            '-',
            fmtPct(workersDelivery.workersCpuPercent),
            '-',
          ],
          baselineRow(pgWorkersBaseline, pgWorkersBaseline.posts - pgWorkersBaseline.errors, 0),
        ],
      ),
    );
    if (baseline.firstError !== undefined) {
      console.log(`  ! baseline: ${baseline.errors} error(s), first: ${baseline.firstError}`);
    }
    const runsOf = (b: Baseline) => b.runs.map(fmtInt).join(' and ');
    console.log(
      `  each baseline is ${fmtInt(callbacks)} POSTs before its delivery and as many after it, as one: ` +
        `${runsOf(baseline)}/s (SQLite), ${runsOf(pgBaseline)}/s (PostgreSQL in-process), ` +
        `${runsOf(pgWorkersBaseline)}/s (PostgreSQL workers)`,
    );
    console.log(
      `  while the ${PG_WORKERS} worker processes delivered: the workers used ` +
        `${fmtPct(workersDelivery.workersCpuPercent)} of a core, the PostgreSQL server ` +
        `${fmtPct(workersDelivery.postgresCpuPercent)}, redis-server ${fmtPct(workersDelivery.redisCpuPercent)}; ` +
        `PostgreSQL ran ${(workersDelivery.transactions / callbacks).toFixed(2)} transactions per callback ` +
        `(${fmtInt(workersDelivery.transactions)} in all); autovacuum and autoanalyze meanwhile: ` +
        (workersDelivery.maintenance.join(', ') || 'none ended or running'),
    );
    console.log(
      `  warm-up (not measured): ${RELAY_WARMUP_CALLBACKS} callbacks at ${fmtInt(warmRate)}/s; the paid orders ` +
        `were made at ${fmtInt(callbacks / (made.ms / 1000))}/s in ${scratchBase} (not timed)` +
        (lowered ? `\n  ${lowered}` : ''),
    );
    console.log(
      `  settleOrder while making them (no fsync there): ${fmtInt(made.settleFirstUs)} us each over the first ` +
        `${fmtInt(made.sampled)} orders, ${fmtInt(made.settleLastUs)} us over the last ${fmtInt(made.sampled)} ` +
        `(${fmtRatio(made.settleLastUs / made.settleFirstUs)} x, with ${fmtInt(callbacks - made.sampled)} callbacks queued before them)`,
    );
    const delivered = check?.states.delivered ?? 0;
    const consistent =
      check !== undefined &&
      delivered === callbacks &&
      deliveryStats.requests === callbacks &&
      deliveryStats.orders === callbacks &&
      deliveryStats.badSignatures === 0 &&
      check.attempts === callbacks &&
      check.outboxLeft === 0;
    console.log(
      check
        ? `  check: table callbacks ${JSON.stringify(check.states)}, ${fmtInt(check.attempts)} attempts, ` +
            `${fmtInt(check.outboxLeft)} outbox rows unsent; the receiver got ${fmtInt(deliveryStats.requests)} ` +
            `callbacks of ${fmtInt(deliveryStats.orders)} orders: ${consistent ? 'consistent' : 'MISMATCH'}`
        : '  check: skipped (the delivery did not finish)',
    );

    const pgConsistent = (
      c: PgCallbackCheck | undefined,
      delivered: number,
      stats: ReceiverStats,
      attempts = delivered,
    ) =>
      c !== undefined &&
      (c.states.delivered ?? 0) === delivered &&
      c.attempts === attempts &&
      c.outboxLeft === 0 &&
      stats.requests === callbacks &&
      stats.orders === callbacks &&
      stats.badSignatures === 0;
    const pgOk = pgConsistent(pgCheck, callbacks, pgDeliveryStats);
    const workersOk = pgConsistent(
      workersCheck,
      2 * callbacks + WORKERS_WARMUP_CALLBACKS,
      workersStats,
      2 * callbacks + WORKERS_WARMUP_ROUNDS * WORKERS_WARMUP_CALLBACKS,
    );
    for (const [name, c, ok] of [
      ['PostgreSQL in-process', pgCheck, pgOk],
      [`PostgreSQL ${PG_WORKERS} workers (both rounds and the warm-up)`, workersCheck, workersOk],
    ] as const) {
      console.log(
        c
          ? `  check (${name}): table callbacks ${JSON.stringify(c.states)}, ${fmtInt(c.attempts)} attempts, ` +
              `${fmtInt(c.outboxLeft)} callback outbox rows not done: ${ok ? 'consistent' : 'MISMATCH'}`
          : `  check (${name}): skipped (the delivery did not finish)`,
      );
    }
    console.log(
      `  the workers' time runs from the moment the held-back callbacks fall due (set 12 s before, untimed) until the receiver has had them all (asked every 20 ms) and the store has none left queued, ` +
        `announced to the workers over Redis as a web process announces a payment (decision 220), after they ` +
        `delivered ${fmtInt(WORKERS_WARMUP_CALLBACKS)} callbacks of their own ${WORKERS_WARMUP_ROUNDS} times (a ` +
        `warm-up, not timed); workers CPU ` +
        `is both processes together`,
    );
    const verdict = (ok: boolean) => (ok ? 'MET' : 'NOT MET');
    console.log('\naims');
    console.log(
      `  checkouts/s = ${fmtInt(checkout.perSecond)} (${fmtRatio(checkout.perSecond / noop.perSecond)} x no-op)` +
        `  (aim >= ${fmtInt(AIM_CHECKOUTS_PER_SECOND)}, no errors): ` +
        verdict(checkout.perSecond >= AIM_CHECKOUTS_PER_SECOND && checkout.result.errors === 0),
    );
    console.log(
      `  checkouts/s on PostgreSQL = ${fmtInt(pgCheckout.perSecond)} ` +
        `(${fmtRatio(pgCheckout.perSecond / pgNoop.perSecond)} x its no-op; beside SQLite, no aim of its own)`,
    );
    console.log(
      `  callbacks/s = ${fmtInt(relayPerSecond)} (${fmtRatio(relayPerSecond / baselinePerSecond)} x baseline)` +
        `  (aim >= ${fmtInt(AIM_CALLBACKS_PER_SECOND)}, all delivered once): ` +
        verdict(relayPerSecond >= AIM_CALLBACKS_PER_SECOND && consistent),
    );
    console.log(
      `  callbacks on SQLite / baseline = ${fmtRatio(relayPerSecond / baselinePerSecond)}` +
        `  (aim >= ${AIM_CALLBACK_RATIO}): ` +
        verdict(relayPerSecond / baselinePerSecond >= AIM_CALLBACK_RATIO && consistent),
    );
    console.log(
      `  callbacks on PostgreSQL / baseline = ${fmtRatio(pgRelayPerSecond / pgBaselinePerSecond)} in-process, ` +
        `${fmtRatio(workersPerSecond / pgWorkersBaselinePerSecond)} with ${PG_WORKERS} workers` +
        `  (aim: beyond SQLite's ${fmtRatio(relayPerSecond / baselinePerSecond)} with several workers): ` +
        verdict(
          workersPerSecond / pgWorkersBaselinePerSecond > relayPerSecond / baselinePerSecond && workersOk,
        ),
    );
    // A delivery cut off by its time limit is still running: leave once everything is cleaned up.
    return delivery.timedOut || pgDelivery.timedOut;
  } finally {
    if (client) await stopChild(client);
    if (receiver) await stopChild(receiver);
    if (listening) await listening.close(1000);
    for (const deps of openDeps.splice(0)) {
      await deps.store.close();
      await deps.callbacks.close();
    }
    for (const stop of stops) await stop();
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  }
}

const role = process.argv[2];
if (role === LOAD_CLIENT_ROLE || role === RECEIVER_ROLE) {
  const send = process.send?.bind(process);
  if (!send) {
    console.error(`bench/checkout.ts ${role} is started by bench/checkout.ts itself, not directly.`);
    process.exit(2);
  }
  if (role === LOAD_CLIENT_ROLE) loadClientRole(send);
  else receiverRole(send);
  // The parent closing the channel is the signal to leave.
  process.on('disconnect', () => process.exit(0));
} else {
  main().then(
    (leftRunning) => {
      if (leftRunning) process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
