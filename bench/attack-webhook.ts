/**
 * Attack benchmark (a report, not a test), issue 12 items 6 and 7: how one authenticated client's hostile
 * requests affect everyone else, measured as GET /api/version latency beside the same figure without them.
 *
 *   npm run bench:attack-webhook                        # 200,000 zakat rows, 5 s per scenario
 *   BENCH_ZAKAT_ROWS=1000000 BENCH_SECONDS=10 npm run bench:attack-webhook
 *
 * The real server (bin/server.ts) runs as a child process over a temp DATA_DIR, seeded first through the
 * real write path (bench/recon-seed.ts: one LZS day, pipeline drained). This process is the client, on
 * loopback only. Scenarios, each for BENCH_SECONDS while a prober asks GET /api/version every 10 ms:
 *
 * 1. quiet: nothing else;
 * 2. one client posting, back to back, the 3.8 MB batch of 5,000 records with 80 unknown properties each
 *    (400,000 in all; refused from its shape before parsing);
 * 3. the same with 60 unknown properties each (300,000, under the per-object limit: parsed, then refused
 *    by the fail-fast schema check and a 100-problem explanation);
 * 4. 4 concurrent GET /api/report/v1/zakat?items=-1 of the seeded day, back to back, with the server's
 *    peak RSS (VmRSS from /proc, sampled every 20 ms) beside its RSS when quiet.
 *
 * Bounded: each scenario stops at its deadline (requests in flight are awaited, at most 60 s); the server
 * is stopped at the end. Always exits 0 when the benchmark ran.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDeps, seedDemoData } from '../core/bootstrap.ts';
import { createLogger } from '../core/logger.ts';
import { mintReportToken } from '../core/report-tokens.ts';
import { fmtInt, fmtMb, fmtMs, fmtRatio, percentile, table } from './format.ts';
import { SEED_SINK, seedReconDay } from './recon-seed.ts';
import { envInt } from './env.ts';

const HOST = '127.0.0.1';
const DAY = '2026-11-20';
const PASSWORD = 'demo-bank-password'; // fixtures/demo/seed.json
const PROBE_EVERY_MS = 10;
const RSS_EVERY_MS = 20;
const DOWNLOADERS = 4;
const REQUEST_TIMEOUT_MS = 60_000;
const REPO = path.resolve(import.meta.dirname, '..');

/** The hostile batch: 5,000 records (the record limit), each with `unknown` properties nobody asked for. */
function hostileBatch(unknown: number, prefix: string): string {
  const transactions = Array.from({ length: 5000 }, (_, i) => {
    const record: Record<string, unknown> = { orderno: `ATTACK-${i}` };
    for (let k = 0; k < unknown; k += 1) record[`${prefix}${k}`] = 1;
    return record;
  });
  return JSON.stringify({ transactions });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

interface Scenario {
  name: string;
  probes: Float64Array;
  attackRequests: number;
  attackLatencies: Float64Array;
  attackStatuses: Set<number>;
  attackBytes: number;
  peakRssBytes: number;
}

/**
 * Runs `attack` (one loop per worker, until the deadline) while probing /api/version and sampling the
 * server's RSS. Each attack call returns the status and the bytes of the answer.
 */
async function scenario(
  name: string,
  origin: string,
  pid: number,
  seconds: number,
  workers: number,
  attack: (signal: AbortSignal) => Promise<{ status: number; bytes: number }>,
): Promise<Scenario> {
  const deadline = performance.now() + seconds * 1000;
  const probes: number[] = [];
  const latencies: number[] = [];
  const statuses = new Set<number>();
  let bytes = 0;
  let peak = rssBytes(pid);
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, RSS_EVERY_MS);
  const probe = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const response = await fetch(`${origin}/api/version`, {
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      await response.arrayBuffer();
      probes.push(performance.now() - t0);
      await sleep(PROBE_EVERY_MS);
    }
  };
  const attacker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const answer = await attack(AbortSignal.timeout(REQUEST_TIMEOUT_MS));
      latencies.push(performance.now() - t0);
      statuses.add(answer.status);
      bytes += answer.bytes;
    }
  };
  await Promise.all([probe(), ...Array.from({ length: workers }, attacker)]);
  clearInterval(sampler);
  const sorted = (values: number[]) => Float64Array.from(values).sort();
  return {
    name,
    probes: sorted(probes),
    attackRequests: latencies.length,
    attackLatencies: sorted(latencies),
    attackStatuses: statuses,
    attackBytes: bytes,
    peakRssBytes: peak,
  };
}

async function startServer(dataDir: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO, 'bin/server.ts')], {
    cwd: REPO,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST,
      LOG_LEVEL: 'warn',
      SEED_DEMO: 'true',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const origin = `http://${HOST}:${port}`;
  for (let i = 0; i < 300; i += 1) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${origin}/api/version`)).ok) return child;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  child.kill('SIGTERM');
  throw new Error('the server did not answer within 30 s');
}

async function main(): Promise<void> {
  const rows = envInt('BENCH_ZAKAT_ROWS', 200_000, 1000, 5_000_000);
  const seconds = envInt('BENCH_SECONDS', 5, 1, 120);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'amil-bench-attack-'));
  let server: ChildProcess | undefined;
  try {
    console.log(`Seeding ${fmtInt(rows)} zakat rows of ${DAY} (not timed)...`);
    const deps = createDeps(
      { DATA_DIR: dataDir, SEED_DEMO: 'true', LOG_LEVEL: 'error' },
      { logger: createLogger('error', process.stderr) },
    );
    await seedDemoData(deps.store, new Date());
    const seeded = await seedReconDay(deps, rows, DAY);
    const { token } = await mintReportToken(deps.store, deps.config.reportTokenSecret, {
      agencies: [SEED_SINK],
      ttlSeconds: 3600,
      now: new Date(),
    });
    await deps.callbacks.close();
    await deps.store.close();

    const port = await freePort();
    server = await startServer(dataDir, port);
    const pid = server.pid ?? 0;
    const origin = `http://${HOST}:${port}`;
    const unknown80 = hostileBatch(80, 'uxx');
    const unknown60 = hostileBatch(60, 'x_unk');
    const post = (body: string) => async (signal: AbortSignal) => {
      const response = await fetch(`${origin}/api/bank/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-password': PASSWORD },
        body,
        signal,
      });
      return { status: response.status, bytes: (await response.arrayBuffer()).byteLength };
    };
    const download = async (signal: AbortSignal) => {
      const response = await fetch(`${origin}/api/report/v1/zakat?start=${DAY}&items=-1`, {
        headers: { authorization: `Bearer ${token}` },
        signal,
      });
      let bytes = 0;
      for await (const chunk of response.body ?? []) bytes += (chunk as Uint8Array).byteLength;
      return { status: response.status, bytes };
    };

    // Warm-up (not measured): the server's first requests compile code paths and fill caches.
    await scenario('warm-up', origin, pid, 2, 0, () => Promise.resolve({ status: 0, bytes: 0 }));
    const quietRss = rssBytes(pid);
    const results = [
      await scenario('quiet', origin, pid, seconds, 0, () => Promise.resolve({ status: 0, bytes: 0 })),
      await scenario(
        `batch ${fmtMb(unknown80.length)} MB, 400,000 unknown keys`,
        origin,
        pid,
        seconds,
        1,
        post(unknown80),
      ),
      await scenario(
        `batch ${fmtMb(unknown60.length)} MB, 300,000 unknown keys`,
        origin,
        pid,
        seconds,
        1,
        post(unknown60),
      ),
      await scenario(`${DOWNLOADERS} x zakat items=-1`, origin, pid, seconds, DOWNLOADERS, download),
    ];
    const quiet = results[0]!;
    const p50 = (s: Scenario) => percentile(s.probes, 50);
    const p99 = (s: Scenario) => percentile(s.probes, 99);

    console.log(
      `\nGET /api/version during each scenario (${seconds} s each; zakat day: ${fmtInt(seeded.transactions)} LZS rows)\n`,
    );
    console.log(
      table(
        [
          'scenario',
          'probes',
          'p50 ms',
          'p99 ms',
          'max ms',
          'p99 / quiet',
          'attacks',
          'attack p50 ms',
          'status',
        ],
        results.map((s) => [
          s.name,
          fmtInt(s.probes.length),
          fmtMs(p50(s)),
          fmtMs(p99(s)),
          fmtMs(s.probes.at(-1) ?? Number.NaN),
          fmtRatio(p99(s) / p99(quiet)),
          fmtInt(s.attackRequests),
          fmtMs(percentile(s.attackLatencies, 50)),
          [...s.attackStatuses].join(',') || '-',
        ]),
      ),
    );
    const downloads = results[3]!;
    console.log(
      `\nServer RSS: quiet ${fmtMb(quietRss)} MB; peak during ${DOWNLOADERS} concurrent zakat downloads ` +
        `${fmtMb(downloads.peakRssBytes)} MB (+${fmtMb(downloads.peakRssBytes - quietRss)} MB); ` +
        `one download ${fmtMb(downloads.attackBytes / Math.max(1, downloads.attackRequests))} MB.`,
    );
  } finally {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server?.once('exit', resolve));
      server.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
