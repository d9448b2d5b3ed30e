/**
 * The load generator of bench/ingest.ts, run as a child process (forked by it) so that building bodies,
 * undici and response parsing use their own core and do not share the server's event loop.
 * Receives one LoadRequest per scenario over IPC and answers with a LoadResult.
 *
 * Two modes: closed loop (each of `connections` users sends, waits for the answer, sends again) and open
 * loop (`ratePerSecond` set: sends are scheduled at fixed times whatever the answers, the Pool queues what
 * its connections cannot take, and latency counts from the scheduled send time, so a slow answer cannot
 * hold back the requests behind it: no coordinated omission).
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
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
  /** Open loop: send this many requests per second at fixed times (warm-up included) instead of closed loop. */
  ratePerSecond?: number;
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
  /** Open loop only: how late each measured send left after its scheduled time (client lag), in ms. */
  sendLagsMs?: Float64Array;
}

const REQUEST_TIMEOUT_MS = 120_000;
/** Open loop: how long after the last scheduled send unanswered requests are waited for, then aborted. */
const OPEN_LOOP_DRAIN_MS = 10_000;

// One sequence for the whole run: no orderno is ever sent twice, whatever the scenario.
const nextOrder = orderSequence('BENCH');

interface Phase {
  requests: number;
  records: number;
  errors: number;
  firstError?: string;
  latencies: number[];
}

type PhaseResult = Phase & { ms: number; cpuPercent: number; sendLags?: number[] };

function fail(phase: Phase, message: string): void {
  phase.errors += 1;
  phase.firstError ??= message;
}

/** Counts an answer (already counted in requests) as records or as an error. */
function checkAnswer(phase: Phase, req: LoadRequest, statusCode: number, text: string): void {
  if (statusCode !== 200) {
    fail(phase, `HTTP ${statusCode}: ${text.slice(0, 300)}`);
    return;
  }
  if (req.expectAccepted) {
    let accepted: unknown;
    try {
      accepted = (JSON.parse(text) as { summary?: { accepted?: number } }).summary?.accepted;
    } catch {
      accepted = undefined;
    }
    if (accepted !== req.batchSize) {
      fail(phase, `accepted ${String(accepted)} of ${req.batchSize}: ${text.slice(0, 300)}`);
      return;
    }
  }
  phase.records += req.batchSize;
}

function post(pool: Pool, req: LoadRequest, body: string, signal?: AbortSignal) {
  return pool.request({
    method: 'POST',
    path: req.path,
    headers: { 'content-type': 'application/json', 'x-api-password': req.password },
    body,
    ...(signal && { signal }),
  });
}

async function runPhase(pool: Pool, req: LoadRequest, seconds: number): Promise<PhaseResult> {
  const phase: Phase = { requests: 0, records: 0, errors: 0, latencies: [] };
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;

  async function user(): Promise<void> {
    while (performance.now() < deadline) {
      const body = batchBody(req.batchSize, nextOrder);
      const t0 = performance.now();
      try {
        const res = await post(pool, req, body);
        const text = await res.body.text();
        phase.latencies.push(performance.now() - t0);
        phase.requests += 1;
        checkAnswer(phase, req, res.statusCode, text);
      } catch (err) {
        phase.requests += 1;
        fail(phase, err instanceof Error ? err.message : String(err));
      }
    }
  }

  await Promise.all(Array.from({ length: req.connections }, user));
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { ...phase, ms, cpuPercent: (cpu.user + cpu.system) / 10 / ms };
}

/**
 * Open loop: request i is scheduled at start + i / rate and sent then (or as soon after as this event
 * loop can), without waiting for earlier answers; the Pool queues it when all connections are busy. Its
 * latency runs from the scheduled time to the end of its answer, or to its failure. Sends stop at the end
 * of the window; requests still unanswered OPEN_LOOP_DRAIN_MS later are aborted and count as errors.
 */
async function runOpenPhase(
  pool: Pool,
  req: LoadRequest,
  rate: number,
  seconds: number,
): Promise<PhaseResult> {
  const phase: Phase = { requests: 0, records: 0, errors: 0, latencies: [] };
  const sendLags: number[] = [];
  const inFlight = new Set<Promise<void>>();
  const abort = new AbortController();
  const intervalMs = 1000 / rate;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const windowEnd = started + seconds * 1000;
  let lastAnswer = started;

  const send = (scheduled: number, body: string) => {
    sendLags.push(performance.now() - scheduled);
    const settle = () => {
      lastAnswer = performance.now();
      phase.latencies.push(lastAnswer - scheduled);
      phase.requests += 1;
    };
    const request = post(pool, req, body, abort.signal)
      .then(async (res) => {
        const text = await res.body.text();
        settle();
        checkAnswer(phase, req, res.statusCode, text);
      })
      .catch((err: unknown) => {
        settle();
        fail(phase, err instanceof Error ? err.message : String(err));
      })
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
  };

  for (let i = 0; ; i += 1) {
    const scheduled = started + i * intervalMs;
    if (scheduled >= windowEnd) break;
    const body = batchBody(req.batchSize, nextOrder); // built before its time, so not counted as lag
    // Sleep on a timer until about 1 ms before the scheduled time, then yield turn by turn (answers are
    // still handled in those turns), so that a send leaves within a fraction of a millisecond of its time.
    for (let wait = scheduled - performance.now(); wait > 0; wait = scheduled - performance.now()) {
      if (wait >= 2) await sleep(Math.floor(wait) - 1);
      else await nextTurn();
    }
    send(scheduled, body);
  }

  let timer: NodeJS.Timeout | undefined;
  const drained = Promise.all(inFlight).then(() => true);
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), OPEN_LOOP_DRAIN_MS);
  });
  if (!(await Promise.race([drained, timedOut]))) {
    abort.abort(new Error(`no answer within ${OPEN_LOOP_DRAIN_MS} ms after the last scheduled send`));
    await Promise.all(inFlight);
  }
  clearTimeout(timer);
  const cpu = process.cpuUsage(cpuBefore);
  const cpuPercent = (cpu.user + cpu.system) / 10 / (performance.now() - started);
  return { ...phase, ms: lastAnswer - started, cpuPercent, sendLags };
}

async function run(req: LoadRequest): Promise<LoadResult> {
  const pool = new Pool(req.origin, {
    connections: req.connections,
    pipelining: 1,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  try {
    const rate = req.ratePerSecond;
    if (rate !== undefined && !(Number.isFinite(rate) && rate > 0)) {
      throw new Error(`ratePerSecond must be a positive number (got ${rate})`);
    }
    const phase = (seconds: number) =>
      rate === undefined ? runPhase(pool, req, seconds) : runOpenPhase(pool, req, rate, seconds);
    const warmup = await phase(req.warmupSeconds);
    const measured = await phase(req.seconds);
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
      ...(measured.sendLags && { sendLagsMs: Float64Array.from(measured.sendLags) }),
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
