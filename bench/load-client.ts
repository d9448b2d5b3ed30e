/**
 * The load generator of bench/ingest.ts, run as a child process (forked by it) so that building bodies,
 * undici and response parsing use their own core and do not share the server's event loop.
 * Receives one LoadRequest per scenario over IPC and answers with a LoadResult.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { batchBody, orderSequence } from './records.ts';

export interface LoadRequest {
  origin: string;
  path: string;
  password: string;
  batchSize: number;
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /** Check that the answer is a webhook response accepting every record (false for the no-op). */
  expectAccepted: boolean;
}

export interface LoadResult {
  requests: number;
  /** Records of requests answered 200 (and, when checked, all accepted). */
  records: number;
  errors: number;
  firstError?: string;
  /** From the start of the measured phase until its last response arrived. */
  elapsedMs: number;
  latenciesMs: Float64Array;
  /** CPU the load client used during the measured phase, in % of one core (near 100: client-bound). */
  clientCpuPercent: number;
  /** Requests and records sent during warm-up (not measured). */
  warmupRequests: number;
  warmupRecords: number;
}

const REQUEST_TIMEOUT_MS = 120_000;

// One sequence for the whole run: no orderno is ever sent twice, whatever the scenario.
const nextOrder = orderSequence('BENCH');

interface Phase {
  requests: number;
  records: number;
  errors: number;
  firstError?: string;
  latencies: number[];
}

async function runPhase(
  pool: Pool,
  req: LoadRequest,
  seconds: number,
): Promise<Phase & { ms: number; cpuPercent: number }> {
  const phase: Phase = { requests: 0, records: 0, errors: 0, latencies: [] };
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const fail = (message: string) => {
    phase.errors += 1;
    phase.firstError ??= message;
  };

  async function user(): Promise<void> {
    while (performance.now() < deadline) {
      const body = batchBody(req.batchSize, nextOrder);
      const t0 = performance.now();
      try {
        const res = await pool.request({
          method: 'POST',
          path: req.path,
          headers: { 'content-type': 'application/json', 'x-api-password': req.password },
          body,
        });
        const text = await res.body.text();
        phase.latencies.push(performance.now() - t0);
        phase.requests += 1;
        if (res.statusCode !== 200) {
          fail(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
          continue;
        }
        if (req.expectAccepted) {
          const accepted = (JSON.parse(text) as { summary?: { accepted?: number } }).summary?.accepted;
          if (accepted !== req.batchSize) {
            fail(`accepted ${String(accepted)} of ${req.batchSize}: ${text.slice(0, 300)}`);
            continue;
          }
        }
        phase.records += req.batchSize;
      } catch (err) {
        phase.requests += 1;
        fail(err instanceof Error ? err.message : String(err));
      }
    }
  }

  await Promise.all(Array.from({ length: req.connections }, user));
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { ...phase, ms, cpuPercent: (cpu.user + cpu.system) / 10 / ms };
}

async function run(req: LoadRequest): Promise<LoadResult> {
  const pool = new Pool(req.origin, {
    connections: req.connections,
    pipelining: 1,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  try {
    const warmup = await runPhase(pool, req, req.warmupSeconds);
    const measured = await runPhase(pool, req, req.seconds);
    return {
      requests: measured.requests,
      records: measured.records,
      errors: measured.errors + warmup.errors,
      ...((measured.firstError ?? warmup.firstError) !== undefined && {
        firstError: measured.firstError ?? warmup.firstError,
      }),
      elapsedMs: measured.ms,
      latenciesMs: Float64Array.from(measured.latencies),
      clientCpuPercent: measured.cpuPercent,
      warmupRequests: warmup.requests,
      warmupRecords: warmup.records,
    };
  } finally {
    await pool.close();
  }
}

const send = process.send?.bind(process);
if (!send) {
  console.error('bench/load-client.ts is started by bench/ingest.ts (npm run bench:ingest), not directly.');
  process.exit(2);
}

process.on('message', (message: LoadRequest) => {
  run(message).then(
    (result) => send({ ok: true, result }),
    (err: unknown) =>
      send({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
// The parent closing the channel is the signal to leave.
process.on('disconnect', () => process.exit(0));
