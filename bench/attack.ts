/**
 * Attack benchmark (a report, not a test): does one kind of hostile traffic take the service down?
 *
 *   npm run bench:attack                 # 5 s per attack, 3 s quiet baseline before each
 *   BENCH_SECONDS=3 npm run bench:attack
 *
 * Starts the real server (`tsx bin/server.ts`, as `npm start` does: embedded mode, a temp DATA_DIR,
 * TRUST_PROXY so attack clients can speak for many addresses through X-Forwarded-For) and, for each
 * attack, measures `GET /api/version` (one keep-alive connection, one request after the other, from this
 * process) first with no attack, then during it, in the same run:
 *   1. qr2: 16 clients asking /qr2/ for 1024 px PNGs of distinct pay links, as fast as answered;
 *   2. passwords: 64 clients posting the bank webhook with a new wrong X-API-Password each time; the
 *      probe also downloads a reconciliation workbook (a file read on libuv's pool, where scrypt runs);
 *   3. pay flood: one client posting the anonymous pay page (POST /pay/...) over 16 connections; the
 *      orders it opened are counted in the database afterwards.
 * The whole set runs twice: with the limits as shipped, then with every per-client limit off (0), which
 * shows what the worker pool and the bounded scrypt do alone, and what the flood does unlimited. The
 * attack clients run in a child process (this file, forked with --attacker) so they do not share the
 * probe's event loop. Loopback only; bounded in time; exits 0 when it ran.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { createDeps, seedDemoData } from '../core/bootstrap.ts';
import { mintReportToken } from '../core/report-tokens.ts';
import { runReconciliation } from '../pipeline/recon/run-day.ts';
import { fmtInt, fmtMs, fmtRatio, percentile, table } from './format.ts';

const ATTACKER_ROLE = '--attacker';
const HOST = '127.0.0.1';
const ATTACK_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const QUIET_SECONDS = 3;
const REPO = path.resolve(import.meta.dirname, '..');

type AttackName = 'qr2' | 'passwords' | 'pay-flood';

interface AttackOrder {
  name: AttackName;
  origin: string;
  seconds: number;
}

/** Answers the attack got, by HTTP status (0: the request failed). */
type Statuses = Record<string, number>;

interface Probe {
  version: Float64Array;
  workbook: Float64Array;
}

// ---------------------------------------------------------------------------------------------------
// The attacker (child process)

async function attack(order: AttackOrder): Promise<Statuses> {
  const statuses: Statuses = {};
  const deadline = performance.now() + order.seconds * 1000;
  const pool = new Pool(order.origin, { connections: 64, pipelining: 1 });
  let sequence = 0;
  const count = (status: number) => (statuses[status] = (statuses[status] ?? 0) + 1);

  const qrClient = async (i: number) => {
    while (performance.now() < deadline) {
      sequence += 1;
      const link = `${order.origin}/pay/LZS/zakat-fitrah/Q-${i}-${sequence}/28.00`;
      const res = await pool.request({
        method: 'GET',
        path: `/qr2/?q=${encodeURIComponent(link)}&size=1024`,
        headers: { 'x-forwarded-for': `10.1.0.${i}` },
      });
      await res.body.arrayBuffer();
      count(res.statusCode);
    }
  };
  const passwordClient = async (i: number) => {
    while (performance.now() < deadline) {
      sequence += 1;
      const res = await pool.request({
        method: 'POST',
        path: '/api/bank/webhook',
        headers: {
          'content-type': 'application/json',
          'x-api-password': `wrong-${i}-${sequence}-${Math.random()}`,
          'x-forwarded-for': `10.2.0.${i}`,
        },
        body: '{"transactions":[]}',
      });
      await res.body.arrayBuffer();
      count(res.statusCode);
    }
  };
  const payClient = async () => {
    while (performance.now() < deadline) {
      sequence += 1;
      const res = await pool.request({
        method: 'POST',
        path: `/pay/LZS/zakat-fitrah/FLOOD-${sequence}/10.00`,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          'x-forwarded-for': '10.3.0.1',
        },
        body: 'email=flood%40example.my',
      });
      await res.body.arrayBuffer();
      count(res.statusCode);
    }
  };

  const clients =
    order.name === 'qr2'
      ? Array.from({ length: 16 }, (_, i) => qrClient(i))
      : order.name === 'passwords'
        ? Array.from({ length: 64 }, (_, i) => passwordClient(i))
        : Array.from({ length: 16 }, () => payClient());
  await Promise.all(clients.map((c) => c.catch(() => count(0))));
  await pool.close();
  return statuses;
}

// ---------------------------------------------------------------------------------------------------
// The orchestrator

/** GET /api/version (and the workbook, when given) one after the other until `until` resolves. */
async function probe(origin: string, until: Promise<unknown>, workbook?: { path: string; token: string }) {
  const pool = new Pool(origin, { connections: 1 });
  const version: number[] = [];
  const book: number[] = [];
  let done = false;
  const finish = () => {
    done = true;
  };
  until.then(finish, finish);
  while (!done) {
    let started = performance.now();
    const res = await pool.request({ method: 'GET', path: '/api/version' });
    await res.body.arrayBuffer();
    version.push(performance.now() - started);
    if (workbook) {
      started = performance.now();
      const wb = await pool.request({
        method: 'GET',
        path: workbook.path,
        headers: { authorization: `Bearer ${workbook.token}` },
      });
      await wb.body.arrayBuffer();
      if (wb.statusCode !== 200) throw new Error(`workbook download answered ${wb.statusCode}`);
      book.push(performance.now() - started);
    }
  }
  await pool.close();
  const sorted = (values: number[]) => Float64Array.from(values).sort();
  return { version: sorted(version), workbook: sorted(book) };
}

/** A loopback port nobody listens on now: PORT must be known, since pay links (and /qr2/) use it. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function startServer(
  dataDir: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(REPO, 'node_modules/.bin/tsx'), ['bin/server.ts'], {
      cwd: REPO,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATA_DIR: dataDir,
        HOST,
        PORT: String(port),
        // Info, as in production: the 'listening' line gives the URL, and every request is logged.
        LOG_LEVEL: 'info',
        TRUST_PROXY: 'true',
        SEED_DEMO: 'true',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (!match?.[1]) return;
      // Listening: the request log lines that follow are read and dropped.
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      resolve({ child, url: match[1] });
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited (${String(code)}): ${output}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function ask(child: ChildProcess, order: AttackOrder): Promise<Statuses> {
  return new Promise((resolve, reject) => {
    child.once('message', (answer: Statuses) => resolve(answer));
    child.once('exit', (code) => reject(new Error(`attacker exited (${String(code)})`)));
    child.send(order);
  });
}

/** A workbook to download (an empty day of LZS) and a report token for it, made before the server starts. */
async function prepare(dataDir: string): Promise<{ path: string; token: string }> {
  const deps = createDeps({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SEED_DEMO: 'true' });
  try {
    await seedDemoData(deps.store, new Date());
    const { run } = await runReconciliation(deps, { sink: 'LZS', day: '2026-01-05', trigger: 'manual' });
    const { token } = await mintReportToken(deps.store, deps.config.reportTokenSecret, {
      agencies: ['LZS'],
      ttlSeconds: 3600,
      now: new Date(),
    });
    return { path: `/api/report/v1/reconciliation/${run.id}/workbook`, token };
  } finally {
    await deps.store.close();
    await deps.callbacks.close();
    await deps.qr.close();
    await deps.limits.close();
  }
}

interface Row {
  limits: string;
  name: AttackName;
  quiet: Probe;
  attacked: Probe;
  statuses: Statuses;
  orders?: number;
}

async function runSet(limits: 'as shipped' | 'off', attacker: ChildProcess): Promise<Row[]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'amil-bench-attack-'));
  const off = {
    RATE_LIMIT_PAGES_PER_MINUTE: '0',
    RATE_LIMIT_ORDERS_PER_MINUTE: '0',
    PARTNER_AUTH_MAX_FAILURES: '0',
  };
  const workbook = await prepare(dataDir);
  const server = await startServer(dataDir, limits === 'off' ? off : {});
  const rows: Row[] = [];
  try {
    for (const name of ['qr2', 'passwords', 'pay-flood'] as const) {
      const book = name === 'passwords' ? workbook : undefined;
      const quiet = await probe(server.url, sleep(QUIET_SECONDS * 1000), book);
      const answers = ask(attacker, { name, origin: server.url, seconds: ATTACK_SECONDS });
      // The attack's first requests go out before the probe starts measuring.
      await sleep(100);
      const attacked = await probe(server.url, answers, book);
      const statuses = await answers;
      const row: Row = { limits, name, quiet, attacked, statuses };
      if (name === 'pay-flood') {
        const db = new Database(path.join(dataDir, 'amil.db'), { readonly: true });
        row.orders = db
          .prepare("SELECT count(*) FROM payments WHERE ref_no LIKE 'FLOOD-%'")
          .pluck()
          .get() as number;
        db.close();
      }
      rows.push(row);
      console.log(`  ${limits}: ${name} done (${JSON.stringify(statuses)})`);
    }
  } finally {
    await stop(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

function report(rows: Row[]): void {
  const p = (samples: Float64Array, at: number) => percentile(samples, at);
  console.log(
    '\n' +
      table(
        [
          'limits / attack',
          'version p50 quiet',
          'p50 attacked',
          'p99 quiet',
          'p99 attacked',
          'p99 ratio',
          'answers',
        ],
        rows.map((r) => [
          `${r.limits} / ${r.name}`,
          fmtMs(p(r.quiet.version, 50)),
          fmtMs(p(r.attacked.version, 50)),
          fmtMs(p(r.quiet.version, 99)),
          fmtMs(p(r.attacked.version, 99)),
          fmtRatio(p(r.attacked.version, 99) / p(r.quiet.version, 99)),
          Object.entries(r.statuses)
            .map(([status, n]) => `${status}: ${fmtInt(n)}`)
            .join(', '),
        ]),
      ),
  );
  for (const r of rows.filter((row) => row.name === 'passwords')) {
    console.log(
      `  ${r.limits}: workbook download p50/p99 ${fmtMs(p(r.quiet.workbook, 50))} / ${fmtMs(p(r.quiet.workbook, 99))} ms quiet, ` +
        `${fmtMs(p(r.attacked.workbook, 50))} / ${fmtMs(p(r.attacked.workbook, 99))} ms during the attack`,
    );
  }
  for (const r of rows.filter((row) => row.name === 'pay-flood')) {
    console.log(`  ${r.limits}: the pay flood opened ${fmtInt(r.orders ?? 0)} orders in ${ATTACK_SECONDS} s`);
  }
}

async function main(): Promise<void> {
  console.log(
    `amil attack benchmark: ${ATTACK_SECONDS} s per attack, ${QUIET_SECONDS} s quiet baseline; Node ${process.version}`,
  );
  // fork keeps process.execArgv, which carries tsx's loader, so the attacker runs TypeScript too.
  const attacker = fork(new URL(import.meta.url), [ATTACKER_ROLE]);
  try {
    const rows = [...(await runSet('as shipped', attacker)), ...(await runSet('off', attacker))];
    report(rows);
  } finally {
    attacker.disconnect();
  }
}

if (process.argv[2] === ATTACKER_ROLE) {
  process.on('message', (order: AttackOrder) => {
    void attack(order).then((statuses) => process.send?.(statuses));
  });
} else {
  await main();
}
