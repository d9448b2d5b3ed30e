/**
 * Report API benchmark (a report, not a test): GET /api/report/v1/payment over many payment rows.
 *
 *   npm run bench:reports                       # 1,000,000 payments
 *   BENCH_PAYMENTS=200000 npm run bench:reports
 *
 * 1. A 100-row page (first, middle and last page of agency LZS) through real HTTP on 127.0.0.1, requested
 *    sequentially, beside a SELECT of the same rows by their key (PAYMENT_SEEK_SQL of core/store/sqlite/payment-report.ts)
 *    straight from better-sqlite3 in the same run, and the naive count(*) + OFFSET page. Aim: p99 <= 5 ms.
 * 2. items=-1 over every LZS payment (about 90% of the rows): peak RSS above the baseline while the body is
 *    read. The server runs in this process, so RSS is sampled every 50 ms by a worker thread (a synchronous
 *    server blocks the main event loop, and a main-thread timer would miss the peak). Aim: < 150 MB.
 * 3. The combined report of a token covering LZS and PPZ (every row): the same pages and items=-1, with the
 *    same aims.
 *
 * The rows are inserted with a direct better-sqlite3 connection (not timed). Always exits 0 when the
 * benchmark ran, whether or not the aims are met.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { createDeps, seedDemoData } from '../core/bootstrap.ts';
import type { Deps } from '../core/deps.ts';
import { listen, type Listening } from '../core/http/serve.ts';
import { mintReportToken } from '../core/report-tokens.ts';
import {
  PAYMENT_COUNT_SQL,
  PAYMENT_PAGE_SQL,
  PAYMENT_SEEK_SQL,
} from '../core/store/sqlite/payment-report.ts';
import { klDayStartUtc } from '../core/time.ts';
import { createWebApp } from '../bin/create-app.ts';
import { fmtInt, fmtMb, fmtMs, fmtRatio, percentile, table } from './format.ts';

const HOST = '127.0.0.1';
const PAGE_SIZE = 100;
const REQUESTS_PER_PAGE = 300;
const WARMUP_REQUESTS = 10;
/** A page scenario stops early past this many seconds, so that a slow endpoint keeps the run bounded. */
const PAGE_SCENARIO_MAX_SECONDS = 30;
const INSERT_TRANSACTION_ROWS = 10_000;
const AIM_PAGE_P99_MS = 5;
const AIM_STREAM_RSS_MB = 150;
const SAMPLE_MS = 50;
const DAYS = 30;

function benchPayments(): number {
  const raw = process.env.BENCH_PAYMENTS;
  if (raw === undefined || raw.trim() === '') return 1_000_000;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1000 || n > 20_000_000) {
    throw new Error(`BENCH_PAYMENTS must be a whole number from 1000 to 20000000 (got "${raw}")`);
  }
  return n;
}

/** The parameters of the store's SQL for every LZS payment (no start/end, as the benchmark requests). */
const ALL_LZS = {
  agency: 'LZS',
  from: klDayStartUtc('0001-01-01'),
  to: '~',
  approved: null,
  sellerOrderNo: null,
};

// ---------------------------------------------------------------------------------------------------
// Data

function insertPayments(file: string, count: number): { lzs: number; ms: number } {
  const db = new Database(file);
  const t0 = performance.now();
  let lzs = 0;
  try {
    db.pragma('busy_timeout = 5000');
    // Not timed and thrown away afterwards: no need for the store's synchronous=FULL here.
    db.pragma('synchronous = OFF');
    const insert = db.prepare(
      `INSERT INTO payments (order_no, agency_code, ref_no, extra_data, payment_category, amount_sen, add_charge_sen,
         email, return_url, payment_method, status, debit_auth_code, fpx_txn_id, fpx_txn_time, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const start = Date.parse('2026-10-01T00:00:00Z');
    const stepMs = (DAYS * 86_400_000) / count;
    const methods = ['fpx', 'card', 'ewallet'] as const;
    const insertRange = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i += 1) {
        const agency = i % 10 === 9 ? 'PPZ' : 'LZS';
        if (agency === 'LZS') lzs += 1;
        const roll = i % 100;
        const status = roll < 90 ? 'success' : roll < 97 ? 'failed' : 'pending';
        const created = new Date(start + Math.floor(i * stepMs)).toISOString();
        const orderNo = `ORD${String(i).padStart(9, '0')}`;
        insert.run(
          orderNo,
          agency,
          `REF-${i}`,
          i % 4 === 0 ? `extra-${i}` : null,
          i % 3 === 0 ? 'zakat-pendapatan' : 'zakat-fitrah',
          100 + ((i * 7919) % 500_000),
          i % 5 === 0 ? 50 : 0,
          `payer${i % 50_000}@example.com`,
          'https://agency.example.com/return',
          status === 'pending' ? null : methods[i % 3],
          status,
          status === 'success' ? '00' : status === 'failed' ? '99' : null,
          status === 'pending' ? null : `FPX${String(i).padStart(12, '0')}`,
          status === 'pending' ? null : created,
          created,
          created,
        );
      }
    });
    for (let from = 0; from < count; from += INSERT_TRANSACTION_ROWS) {
      insertRange.immediate(from, Math.min(count, from + INSERT_TRANSACTION_ROWS));
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.exec('ANALYZE');
  } finally {
    db.close();
  }
  return { lzs, ms: performance.now() - t0 };
}

// ---------------------------------------------------------------------------------------------------
// Statistics and formatting

interface Timing {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

function timing(samples: readonly number[]): Timing {
  const sorted = Float64Array.from(samples).sort();
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: percentile(sorted, 100),
  };
}

// ---------------------------------------------------------------------------------------------------
// Page latency: the endpoint and the raw SELECT

interface RawStatements {
  seek: Database.Statement;
  page: Database.Statement;
  count: Database.Statement;
}

interface PageResult {
  name: string;
  page: number;
  http: Timing;
  raw: Timing;
  naive: Timing;
  errors: number;
  firstError?: string;
}

// The requests are sent from a worker thread: its own heap and event loop, so that parsing responses and
// the client's garbage collection do not pause the server being measured (which runs on the main thread).
const REQUESTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const { target, headers, expectRows, warmup, requests, maxMs } = workerData;
const once = async () => {
  const res = await fetch(target, { headers });
  const text = await res.text();
  if (res.status !== 200) throw new Error('HTTP ' + res.status + ': ' + text.slice(0, 200));
  if (expectRows !== null) {
    const rows = JSON.parse(text).data.length;
    if (rows !== expectRows) throw new Error(rows + ' rows, expected ' + expectRows);
  }
};
(async () => {
  let errors = 0;
  let firstError;
  for (let i = 0; i < warmup; i += 1) await once().catch(() => undefined);
  const httpMs = [];
  const started = performance.now();
  for (let i = 0; i < requests && performance.now() - started < maxMs; i += 1) {
    const t0 = performance.now();
    try {
      await once();
    } catch (err) {
      errors += 1;
      firstError ??= String(err);
    }
    httpMs.push(performance.now() - t0);
  }
  parentPort.postMessage({ httpMs, errors, firstError });
})();
`;

/** Sequential requests to one URL from a worker thread: their latencies, and how many failed. */
async function timeRequests(
  target: string,
  headers: Record<string, string>,
  expectRows: number | null,
): Promise<{ httpMs: number[]; errors: number; firstError?: string }> {
  const worker = new Worker(REQUESTER_SOURCE, {
    eval: true,
    workerData: {
      target,
      headers,
      expectRows,
      warmup: WARMUP_REQUESTS,
      requests: REQUESTS_PER_PAGE,
      maxMs: PAGE_SCENARIO_MAX_SECONDS * 1000,
    },
  });
  try {
    return await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  } finally {
    await worker.terminate();
  }
}

/** Latency of one page of the combined report (a token of several agencies, no agency in the query). */
async function timeCombinedPage(url: string, token: string, page: number) {
  const { httpMs, errors, firstError } = await timeRequests(
    `${url}/api/report/v1/payment?items=${PAGE_SIZE}&page=${page}`,
    { authorization: `Bearer ${token}` },
    PAGE_SIZE,
  );
  return { page, http: timing(httpMs), errors, ...(firstError !== undefined && { firstError }) };
}

/** The no-op baseline on the same stack: GET /api/version (no auth, no database). */
async function timeNoop(url: string): Promise<Timing> {
  const { httpMs, errors, firstError } = await timeRequests(`${url}/api/version`, {}, null);
  if (errors > 0) throw new Error(`GET /api/version failed: ${firstError}`);
  return timing(httpMs);
}

async function timePage(
  name: string,
  page: number,
  url: string,
  token: string,
  raw: RawStatements,
): Promise<PageResult> {
  const { httpMs, errors, firstError } = await timeRequests(
    `${url}/api/report/v1/payment?items=${PAGE_SIZE}&page=${page}`,
    { authorization: `Bearer ${token}` },
    PAGE_SIZE,
  );

  // The baseline: the same 100 rows by their key, the row before the page looked up once beforehand.
  const before =
    page === 0
      ? { createdAt: '', orderNo: '' }
      : (raw.page.get({ ...ALL_LZS, limit: 1, offset: page * PAGE_SIZE - 1 }) as {
          createdAt: string;
          orderNo: string;
        });
  const seek = { ...ALL_LZS, afterCreated: before.createdAt, afterOrder: before.orderNo, limit: PAGE_SIZE };
  const rawMs: number[] = [];
  for (let i = 0; i < WARMUP_REQUESTS; i += 1) raw.seek.all(seek);
  for (let i = 0; i < httpMs.length; i += 1) {
    const t0 = performance.now();
    const rows = raw.seek.all(seek);
    rawMs.push(performance.now() - t0);
    if (rows.length !== PAGE_SIZE) throw new Error(`raw page ${page} returned ${rows.length} rows`);
  }
  // For contrast, what a plain page costs: count(*) for total_pages plus LIMIT/OFFSET (fewer runs: slow).
  const naiveMs: number[] = [];
  for (let i = 0; i < Math.min(httpMs.length, 30); i += 1) {
    const t0 = performance.now();
    raw.count.get(ALL_LZS);
    raw.page.all({ ...ALL_LZS, limit: PAGE_SIZE, offset: page * PAGE_SIZE });
    naiveMs.push(performance.now() - t0);
  }
  return {
    name,
    page,
    http: timing(httpMs),
    raw: timing(rawMs),
    naive: timing(naiveMs),
    errors,
    ...(firstError !== undefined && { firstError }),
  };
}

// ---------------------------------------------------------------------------------------------------
// Streaming: items=-1 with RSS sampled by a worker thread

const SAMPLER_SOURCE = `
const { workerData } = require('node:worker_threads');
const peak = new Float64Array(workerData.buffer);
const sample = () => { const rss = process.memoryUsage.rss(); if (rss > peak[0]) peak[0] = rss; peak[1] += 1; };
sample();
setInterval(sample, workerData.intervalMs);
`;

interface StreamResult {
  status: number;
  baselineRss: number;
  peakRss: number;
  samples: number;
  bytes: number;
  rows: number;
  ms: number;
  error?: string;
}

async function streamAll(url: string, token: string): Promise<StreamResult> {
  (globalThis as { gc?: () => void }).gc?.();
  const buffer = new SharedArrayBuffer(16);
  const shared = new Float64Array(buffer);
  const baselineRss = process.memoryUsage.rss();
  shared[0] = baselineRss;
  const sampler = new Worker(SAMPLER_SOURCE, { eval: true, workerData: { buffer, intervalMs: SAMPLE_MS } });
  await new Promise<void>((resolve, reject) => {
    sampler.once('online', () => resolve());
    sampler.once('error', reject);
  });
  let bytes = 0;
  let status = 0;
  let error: string | undefined;
  // Rows are counted without parsing the body: each row of the payment report has one fpx_seller_order_no.
  const marker = Buffer.from('"fpx_seller_order_no"');
  let rows = 0;
  let tail = Buffer.alloc(0);
  const t0 = performance.now();
  try {
    const res = await fetch(`${url}/api/report/v1/payment?items=-1`, {
      headers: { authorization: `Bearer ${token}` },
    });
    status = res.status;
    if (res.body) {
      for await (const chunk of res.body) {
        const bytesOfChunk = Buffer.from(chunk as Uint8Array);
        bytes += bytesOfChunk.length;
        const view = Buffer.concat([tail, bytesOfChunk]);
        for (let at = view.indexOf(marker); at !== -1; at = view.indexOf(marker, at + marker.length))
          rows += 1;
        tail = Buffer.from(view.subarray(Math.max(0, view.length - marker.length + 1)));
      }
    }
    if (status !== 200) error = `HTTP ${status}`;
  } catch (err) {
    error = String(err);
  }
  const ms = performance.now() - t0;
  // One last sample after the response, then stop the sampler.
  await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS * 2));
  await sampler.terminate();
  return {
    status,
    baselineRss,
    peakRss: Math.max(shared[0] ?? 0, process.memoryUsage.rss()),
    samples: shared[1] ?? 0,
    bytes,
    rows,
    ms,
    ...(error !== undefined && { error }),
  };
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const count = benchPayments();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'amil-bench-reports-'));
  let deps: Deps | undefined;
  let listening: Listening | undefined;
  let rawDb: Database.Database | undefined;
  try {
    deps = createDeps({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SEED_DEMO: 'true', HOST, PORT: '0' });
    await seedDemoData(deps.store, new Date());

    console.log(
      `amil report benchmark: ${fmtInt(count)} payments; Node ${process.version}; data in ${tmpdir()}`,
    );
    process.stdout.write(`  inserting ${fmtInt(count)} payments (not timed)...`);
    const inserted = insertPayments(deps.config.databaseFile, count);
    process.stdout.write(
      ` done in ${(inserted.ms / 1000).toFixed(1)} s (${fmtInt(inserted.lzs)} of agency LZS)\n`,
    );

    listening = await listen([
      { name: 'reports', app: createWebApp(deps, ['base', 'reports', 'pay']), host: HOST, port: 0 },
    ]);
    const url = listening.servers[0]?.url;
    if (!url) throw new Error('server did not start');
    const { token } = await mintReportToken(deps.store, deps.config.reportTokenSecret, {
      agencies: ['LZS'],
      ttlSeconds: 3600,
      now: new Date(),
    });
    const { token: bothToken } = await mintReportToken(deps.store, deps.config.reportTokenSecret, {
      agencies: ['LZS', 'PPZ'],
      ttlSeconds: 3600,
      now: new Date(),
    });

    rawDb = new Database(deps.config.databaseFile, { readonly: true });
    const raw: RawStatements = {
      seek: rawDb.prepare(PAYMENT_SEEK_SQL),
      page: rawDb.prepare(PAYMENT_PAGE_SQL),
      count: rawDb.prepare(PAYMENT_COUNT_SQL),
    };
    const total = (raw.count.get(ALL_LZS) as { n: number }).n;
    const lastPage = Math.ceil(total / PAGE_SIZE) - 1;
    // The last page is full when the total is a multiple of the page size; otherwise take the last full one.
    const lastFullPage = total % PAGE_SIZE === 0 ? lastPage : lastPage - 1;
    const pages = [
      ['first', 0],
      ['middle', Math.floor(lastFullPage / 2)],
      ['last', lastFullPage],
    ] as const;

    process.stdout.write(`  no-op GET /api/version: ${REQUESTS_PER_PAGE} requests...`);
    const noop = await timeNoop(url);
    process.stdout.write(' done\n');
    const results: PageResult[] = [];
    for (const [name, page] of pages) {
      process.stdout.write(`  ${name} page (${page}): up to ${REQUESTS_PER_PAGE} requests...`);
      const result = await timePage(name, page, url, token, raw);
      results.push(result);
      process.stdout.write(` ${result.http.n} done\n`);
    }

    process.stdout.write(`  items=-1 over ${fmtInt(total)} LZS payments...`);
    const stream = await streamAll(url, token);
    process.stdout.write(' done\n');

    const lastCombined = Math.floor(count / PAGE_SIZE) - 1;
    const combined = [];
    for (const page of [0, Math.floor(lastCombined / 2), lastCombined]) {
      process.stdout.write(`  combined LZS+PPZ page (${page}): up to ${REQUESTS_PER_PAGE} requests...`);
      const result = await timeCombinedPage(url, bothToken, page);
      combined.push(result);
      process.stdout.write(` ${result.http.n} done\n`);
    }
    process.stdout.write(`  combined items=-1 over ${fmtInt(count)} payments...`);
    const combinedStream = await streamAll(url, bothToken);
    process.stdout.write(' done\n\n');

    // -- the report ---------------------------------------------------------------------------------
    console.log(
      `page of ${PAGE_SIZE} (agency LZS, ${fmtInt(total)} rows, ${fmtInt(lastPage + 1)} pages), sequential ` +
        `requests over keep-alive; raw = the same rows selected by their key on a separate better-sqlite3 ` +
        `connection; naive = count(*) + LIMIT/OFFSET, what the page would cost without the day counts`,
    );
    console.log(
      table(
        [
          'page',
          'n',
          'http p50 ms',
          'http p99 ms',
          'http max ms',
          'raw SELECT p50',
          'raw p99',
          'http/raw p50',
          'http/raw p99',
          'http/no-op p50',
          'naive p50',
          'errors',
        ],
        results.map((r) => [
          `${r.name} (${r.page})`,
          String(r.http.n),
          fmtMs(r.http.p50),
          fmtMs(r.http.p99),
          fmtMs(r.http.max),
          fmtMs(r.raw.p50),
          fmtMs(r.raw.p99),
          fmtRatio(r.http.p50 / r.raw.p50),
          fmtRatio(r.http.p99 / r.raw.p99),
          fmtRatio(r.http.p50 / noop.p50),
          fmtMs(r.naive.p50),
          String(r.errors),
        ]),
      ),
    );
    console.log(
      `no-op baseline GET /api/version, same server and client: p50 ${fmtMs(noop.p50)} ms, ` +
        `p99 ${fmtMs(noop.p99)} ms, max ${fmtMs(noop.max)} ms`,
    );
    for (const r of results) {
      if (r.firstError !== undefined)
        console.log(`  ! ${r.name} page: ${r.errors} error(s), first: ${r.firstError}`);
    }

    const peakAbove = stream.peakRss - stream.baselineRss;
    const seconds = stream.ms / 1000;
    console.log(`\nitems=-1 (agency LZS, ${fmtInt(total)} rows)`);
    console.log(
      `  HTTP ${stream.status}${stream.error !== undefined ? ` (${stream.error})` : ''}; ` +
        `${fmtMb(stream.bytes)} MB received, ${fmtInt(stream.rows)} rows in ${fmtMs(stream.ms)} ms ` +
        `(${fmtInt(stream.rows / seconds)} rows/s, ${fmtMb(stream.bytes / seconds)} MB/s)`,
    );
    console.log(
      `  RSS: baseline ${fmtMb(stream.baselineRss)} MB, peak ${fmtMb(stream.peakRss)} MB, ` +
        `peak above baseline ${fmtMb(peakAbove)} MB (${fmtInt(stream.samples)} samples, every ${SAMPLE_MS} ms, ` +
        `from a worker thread; server and client share this process)`,
    );

    console.log(
      `\ncombined report of a token covering LZS and PPZ (${fmtInt(count)} rows), pages of ${PAGE_SIZE}`,
    );
    console.log(
      table(
        ['page', 'n', 'http p50 ms', 'http p99 ms', 'http max ms', 'errors'],
        combined.map((r) => [
          String(r.page),
          String(r.http.n),
          fmtMs(r.http.p50),
          fmtMs(r.http.p99),
          fmtMs(r.http.max),
          `${r.errors}${r.firstError !== undefined ? ` (${r.firstError})` : ''}`,
        ]),
      ),
    );
    const combinedSeconds = combinedStream.ms / 1000;
    console.log(
      `combined items=-1: HTTP ${combinedStream.status}${combinedStream.error !== undefined ? ` (${combinedStream.error})` : ''}; ` +
        `${fmtInt(combinedStream.rows)} rows in ${fmtMs(combinedStream.ms)} ms ` +
        `(${fmtInt(combinedStream.rows / combinedSeconds)} rows/s); peak RSS above baseline ` +
        `${fmtMb(combinedStream.peakRss - combinedStream.baselineRss)} MB`,
    );

    const verdict = (ok: boolean) => (ok ? 'MET' : 'NOT MET');
    const worstP99 = Math.max(...results.map((r) => r.http.p99));
    const pageErrors = results.reduce((sum, r) => sum + r.errors, 0);
    const streamOk = stream.status === 200 && stream.rows === total;
    console.log('\naims');
    for (const r of results) {
      console.log(
        `  ${r.name} page p99 = ${fmtMs(r.http.p99)} ms (aim <= ${AIM_PAGE_P99_MS} ms): ` +
          verdict(r.http.p99 <= AIM_PAGE_P99_MS && r.errors === 0),
      );
    }
    console.log(
      `  all pages: worst p99 ${fmtMs(worstP99)} ms${pageErrors > 0 ? `, ${pageErrors} error(s)` : ''}: ` +
        verdict(worstP99 <= AIM_PAGE_P99_MS && pageErrors === 0),
    );
    console.log(
      `  items=-1 peak RSS above baseline = ${fmtMb(peakAbove)} MB (aim < ${AIM_STREAM_RSS_MB} MB, all ` +
        `${fmtInt(total)} rows served): ${verdict(peakAbove < AIM_STREAM_RSS_MB * 1024 * 1024 && streamOk)}` +
        (streamOk ? '' : ` (served ${fmtInt(stream.rows)} rows, HTTP ${stream.status})`),
    );
    const combinedWorst = Math.max(...combined.map((r) => r.http.p99));
    const combinedErrors = combined.reduce((sum, r) => sum + r.errors, 0);
    console.log(
      `  combined pages: worst p99 ${fmtMs(combinedWorst)} ms (aim <= ${AIM_PAGE_P99_MS} ms): ` +
        verdict(combinedWorst <= AIM_PAGE_P99_MS && combinedErrors === 0),
    );
    const combinedAbove = combinedStream.peakRss - combinedStream.baselineRss;
    console.log(
      `  combined items=-1 peak RSS above baseline = ${fmtMb(combinedAbove)} MB (aim < ${AIM_STREAM_RSS_MB} MB, ` +
        `all ${fmtInt(count)} rows served): ` +
        verdict(
          combinedAbove < AIM_STREAM_RSS_MB * 1024 * 1024 &&
            combinedStream.status === 200 &&
            combinedStream.rows === count,
        ),
    );
  } finally {
    rawDb?.close();
    if (listening) await listening.close(1000);
    await deps?.store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
