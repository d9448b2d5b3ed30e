/**
 * Direct callbacks on PostgreSQL for bench/checkout.ts (issue 17): paid orders made on the benchmark's
 * PostgreSQL, then delivered (a) by the in-process runtime of this process, and (b) by several real worker
 * processes (`bin/worker.ts`: the BullMQ outbox relay and workers) on one Redis, timed from the moment their
 * held-back callbacks fall due until every one is delivered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { CALLBACK_QUEUE } from '../core/queues.ts';
import { wakeChannel } from '../pipeline/bullmq/wakes.ts';
import { processCpuSeconds, processTreeCpuSeconds } from './redis.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/** When the held-back callbacks become due: never, until the workers are up and the clock starts. */
const HELD_BACK = '2999-01-01T00:00:00Z';

/** What the store says of the callbacks after a delivery. */
export interface PgCallbackCheck {
  states: Record<string, number>;
  attempts: number;
  /** Callback outbox rows not done. */
  outboxLeft: number;
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Runs `fn` with durable commits off for new sessions of the database (making orders is not timed). */
export async function withoutDurableCommits<T>(url: string, fn: () => Promise<T>): Promise<T> {
  await withClient(url, (c) => c.query('ALTER DATABASE amil SET synchronous_commit = off'));
  try {
    return await fn();
  } finally {
    await withClient(url, (c) => c.query('ALTER DATABASE amil RESET synchronous_commit'));
  }
}

/** The callbacks' states, attempts and unfinished outbox rows. */
export function checkPgCallbacks(url: string): Promise<PgCallbackCheck> {
  return withClient(url, async (c) => {
    const states: Record<string, number> = {};
    const byState = await c.query<{ state: string; n: string }>(
      'SELECT state, count(*) AS n FROM callbacks GROUP BY state',
    );
    for (const row of byState.rows) states[row.state] = Number(row.n);
    const count = async (sql: string) => Number((await c.query<{ n: string }>(sql)).rows[0]?.n ?? 0);
    return {
      states,
      attempts: await count('SELECT count(*) AS n FROM callback_attempts'),
      outboxLeft: await count(
        `SELECT count(*) AS n FROM outbox WHERE queue = 'callbacks' AND done_at IS NULL`,
      ),
    };
  });
}

/** Keeps the callbacks queued so far from being leased until `releaseCallbacks` (they are due then). */
export function holdBackCallbacks(url: string): Promise<unknown> {
  return withClient(url, (c) =>
    c.query(`UPDATE callbacks SET next_attempt_at = $1 WHERE state = 'queued'`, [HELD_BACK]),
  );
}

/** Makes the held-back callbacks due at `at`, in the order they were queued. */
function releaseCallbacks(url: string, at: Date): Promise<unknown> {
  return withClient(url, (c) =>
    c.query(`UPDATE callbacks SET next_attempt_at = $2 WHERE state = 'queued' AND next_attempt_at = $1`, [
      HELD_BACK,
      at.toISOString(),
    ]),
  );
}

/**
 * How long after the release's update the held-back callbacks fall due (the clock starts then): longer than
 * a PostgreSQL 15 session may hold its statistics once idle (10 s), so the warm-up's transactions are all
 * reported before the count starts.
 */
const RELEASE_AHEAD_MS = 12_000;

async function announceCallbacks(redisUrl: string, queuePrefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    await redis.publish(wakeChannel(queuePrefix), CALLBACK_QUEUE);
  } finally {
    redis.disconnect();
  }
}

/** Starts `bin/worker.ts` on the store and Redis given; resolves once it says it started. */
function startWorkerProcess(env: Record<string, string>): Promise<ChildProcess> {
  // BENCH_WORKER_CPU_PROF=DIR: a .cpuprofile of each worker process, written when it stops.
  const profile = process.env.BENCH_WORKER_CPU_PROF;
  const flags = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', 'bin/worker.ts'], {
    cwd: REPO,
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (d: Buffer) => {
      output += d.toString();
      if (output.includes('worker started')) {
        child.stdout?.off('data', onData);
        // Keep reading (and dropping) its log: a full pipe would stall the worker.
        child.stdout?.resume();
        resolve(child);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) =>
      reject(new Error(`worker exited with ${String(code)}: ${output.slice(-2000)}`)),
    );
  });
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** The delivery by worker processes: its time and the workers' CPU. */
export interface WorkersDelivery {
  ms: number;
  timedOut: boolean;
  /** CPU of all the workers together over the delivery, in % of one core. */
  workersCpuPercent: number;
  /** CPU of the PostgreSQL server (postmaster and backends) and of redis-server, in % of one core. */
  postgresCpuPercent: number;
  redisCpuPercent: number;
  /**
   * Transactions the server committed or rolled back from the release until the workers stopped (each
   * statement outside a transaction is one): the round trips the workers' delivery cost the store.
   */
  transactions: number;
  /**
   * Autovacuum's and autoanalyze's runs that ended during the delivery, each as `table (vacuum|analyze)`,
   * and those still running when it ended (`table (vacuum, running)`): the server's CPU above counts their
   * work too, on whatever rows the scenarios before left.
   */
  maintenance: string[];
}

/**
 * The database's transactions so far. A session reports its counts when it goes idle (at most once a second,
 * else up to 10 s later) and when it ends.
 */
/** Waits (up to 10 s) until no other session is connected to the database: each reported its counts. */
function sessionsGone(url: string): Promise<void> {
  return withClient(url, async (c) => {
    for (let waited = 0; waited < 10_000; waited += 50) {
      const { rows } = await c.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
      );
      if (Number(rows[0]?.n ?? 0) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
}

/** Each table's autovacuum and autoanalyze runs so far, as `table (vacuum|analyze)` once per run. */
function maintenanceSoFar(url: string): Promise<string[]> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ relname: string; vacuums: number; analyzes: number }>(
      `SELECT relname, autovacuum_count::int AS vacuums, autoanalyze_count::int AS analyzes
       FROM pg_stat_user_tables ORDER BY relname`,
    );
    return rows.flatMap((r) => [
      ...Array<string>(r.vacuums).fill(`${r.relname} (vacuum)`),
      ...Array<string>(r.analyzes).fill(`${r.relname} (analyze)`),
    ]);
  });
}

/** The vacuums and analyses running now, as `table (vacuum, running)` or `table (analyze, running)`. */
function maintenanceRunning(url: string): Promise<string[]> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ run: string }>(
      `SELECT relid::regclass::text || ' (vacuum, running)' AS run FROM pg_stat_progress_vacuum
       UNION ALL
       SELECT relid::regclass::text || ' (analyze, running)' FROM pg_stat_progress_analyze`,
    );
    return rows.map((r) => r.run);
  });
}

/** What `after` has that `before` had not, as a multiset. */
function runsSince(before: readonly string[], after: readonly string[]): string[] {
  const left = [...before];
  return after.filter((run) => {
    const i = left.indexOf(run);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

function transactionsSoFar(url: string): Promise<number> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ n: string }>(
      `SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`,
    );
    return Number(rows[0]?.n ?? 0);
  });
}

/**
 * Starts `workers` worker processes, lets them deliver the callbacks not held back (a warm-up, not timed),
 * then makes the held-back callbacks due a few seconds later and times from then until the receiver has had
 * them all (asked every 20 ms) and no callback is queued any more, or `limitSeconds` pass; then stops the
 * workers.
 */
export async function timeWorkers(options: {
  databaseUrl: string;
  redisUrl: string;
  dataDir: string;
  workers: number;
  limitSeconds: number;
  /** The PostgreSQL postmaster's and redis-server's pids, for their CPU over the delivery. */
  postgresPid: number;
  redisPid: number;
  /**
   * How many times the workers deliver the callbacks not held back before the clock starts (a warm-up, not
   * timed; each round after the first queues them again).
   */
  warmupRounds: number;
  /** Called once the warm-up is delivered, before the clock starts. */
  warmedUp?: () => Promise<unknown>;
  /**
   * The callbacks released, and how many distinct ones the receiver has had since the clock started: the
   * store is asked whether any is still queued only once they have all arrived.
   */
  expected?: number;
  arrived?: () => Promise<number>;
}): Promise<WorkersDelivery> {
  const env = {
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    QUEUE_PREFIX: 'bench',
    DATA_DIR: options.dataDir,
  };
  const children: ChildProcess[] = [];
  try {
    // The workers deliver the warm-up from the moment they start: what they finish after this is the warm-up.
    const warmStart = new Date().toISOString();
    for (let i = 0; i < options.workers; i += 1) children.push(await startWorkerProcess(env));
    // Warm-up, not timed: the workers deliver the callbacks that were not held back, `warmupRounds` times.
    // They start cold (V8 compiles the delivery path over its first thousands of runs, connections open on
    // first use); a deployment's run for days.
    await withClient(options.databaseUrl, async (c) => {
      for (let round = 1; round <= options.warmupRounds; round += 1) {
        // The warm-up's callbacks once more, due now, as the workers delivered them (their attempts stay).
        if (round > 1)
          await c.query(
            `UPDATE callbacks SET state = 'queued', next_attempt_at = now(), finished_at = NULL
             WHERE state = 'delivered' AND finished_at >= $1`,
            [warmStart],
          );
        await announceCallbacks(options.redisUrl, env.QUEUE_PREFIX);
        const warmUntil = performance.now() + options.limitSeconds * 1000;
        for (;;) {
          const { rows } = await c.query<{ left: boolean }>(
            `SELECT EXISTS (SELECT 1 FROM callbacks WHERE state = 'queued' AND next_attempt_at < $1) AS left`,
            [HELD_BACK],
          );
          if (!rows[0]?.left) break;
          if (performance.now() > warmUntil) throw new Error('the workers did not deliver the warm-up');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    });
    await options.warmedUp?.();
    // The held-back callbacks fall due a few seconds from now, by the clock as in production: the update that
    // says so (20,000 rows) is the benchmark's doing, not the delivery's, and is made before the clock starts.
    const dueAt = new Date(Date.now() + RELEASE_AHEAD_MS);
    await releaseCallbacks(options.databaseUrl, dueAt);
    if (Date.now() > dueAt.getTime() - 1000) throw new Error('the release took longer than RELEASE_AHEAD_MS');
    await new Promise((resolve) => setTimeout(resolve, dueAt.getTime() - 500 - Date.now()));
    const maintenance0 = await maintenanceSoFar(options.databaseUrl);
    const transactions0 = await transactionsSoFar(options.databaseUrl);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, dueAt.getTime() - Date.now())));
    const cpu0 = children.map((c) => processCpuSeconds(c.pid ?? 0));
    const postgres0 = processTreeCpuSeconds(options.postgresPid);
    const redis0 = processCpuSeconds(options.redisPid);
    const t0 = performance.now();
    // Told over Redis, as a web process tells them of a payment (decision 220): no wait for their poll.
    await announceCallbacks(options.redisUrl, env.QUEUE_PREFIX);
    let timedOut = false;
    await withClient(options.databaseUrl, async (c) => {
      for (;;) {
        const waitForArrivals =
          options.arrived !== undefined && (await options.arrived()) < (options.expected ?? 0);
        if (waitForArrivals && performance.now() - t0 <= options.limitSeconds * 1000) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          continue;
        }
        // Whether any callback is still queued: a look at the first queued one in the state index. Counting
        // the delivered ones instead read every delivered row each time, and cost the server a tenth of a
        // core that the workers' own statements then lacked (checkPgCallbacks counts them once, after).
        // Asked only once the receiver has had them all: each look still cost the server 12 to 35 us per
        // callback delivered, walking the state index's entries of the callbacks just finished.
        const { rows } = await c.query<{ left: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM callbacks WHERE state = 'queued') AS left`,
        );
        if (!rows[0]?.left) return;
        if (performance.now() - t0 > options.limitSeconds * 1000) {
          timedOut = true;
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    const ms = performance.now() - t0;
    const cpu = children.reduce((sum, c, i) => sum + processCpuSeconds(c.pid ?? 0) - cpu0[i]!, 0);
    const percent = (seconds: number) => (seconds * 100_000) / ms;
    const delivery = {
      ms,
      timedOut,
      workersCpuPercent: percent(cpu),
      postgresCpuPercent: percent(processTreeCpuSeconds(options.postgresPid) - postgres0),
      redisCpuPercent: percent(processCpuSeconds(options.redisPid) - redis0),
      maintenance: [
        ...runsSince(maintenance0, await maintenanceSoFar(options.databaseUrl)),
        ...(await maintenanceRunning(options.databaseUrl)),
      ],
    };
    await Promise.all(children.splice(0).map(stopProcess));
    await sessionsGone(options.databaseUrl);
    // This process's own few are in it too (the looks once every callback had arrived), and the workers'
    // idle leases between the last delivery and their stop.
    return { ...delivery, transactions: (await transactionsSoFar(options.databaseUrl)) - transactions0 };
  } finally {
    await Promise.all(children.map(stopProcess));
  }
}
