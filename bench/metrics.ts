/**
 * npm run bench:metrics: what one GET /metrics scrape costs the web process. The store-backed gauges are
 * computed at scrape time with synchronous SQLite, so a scrape holds this process's event loop; this
 * measures how long, over a store of BENCH_POSTINGS postings (default 100,000, all received within the
 * metrics window), beside a scrape of an empty store in the same run:
 *   empty     a fresh store (the baseline: prom-client and the process metrics alone)
 *   backlog   every posting stored, none normalised yet (every batch counted as not ledgered)
 *   ledgered  after the in-process pipeline ran (the steady state)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createDeps, seedDemoData } from '../core/bootstrap.ts';
import { createLogger } from '../core/logger.ts';
import type { Deps } from '../core/deps.ts';
import { ingestBankBatch } from '../ingest/bank-webhook/service.ts';
import { createInProcessRuntime } from '../pipeline/in-process-runtime.ts';
import type { BankTransaction } from '../schemas/index.ts';
import { benchRecord, orderSequence } from './records.ts';
import { table } from './format.ts';

const DEMO_PARTNER = 'demo-bank'; // fixtures/demo/seed.json
const RECORDS_PER_BATCH = 1000;
const SCRAPES = 20;
const POSTINGS = Number(process.env.BENCH_POSTINGS ?? 100_000);

async function newDeps(dir: string): Promise<Deps> {
  const deps = createDeps(
    { DATA_DIR: dir, SEED_DEMO: 'true', LOG_LEVEL: 'silent' },
    { logger: createLogger('silent') },
  );
  await seedDemoData(deps.store, new Date());
  return deps;
}

async function storePostings(deps: Deps, total: number): Promise<void> {
  const next = orderSequence('MET');
  for (let stored = 0; stored < total; stored += RECORDS_PER_BATCH) {
    const transactions: BankTransaction[] = [];
    for (let i = 0; i < Math.min(RECORDS_PER_BATCH, total - stored); i += 1) {
      const { orderno, n } = next();
      transactions.push(benchRecord(orderno, n));
    }
    const request = { transactions };
    if (!deps.validators.bankWebhookRequest(request)) throw new Error('a benchmark batch fails the schema');
    const body = Buffer.from(JSON.stringify(request));
    await ingestBankBatch(deps, { partnerId: DEMO_PARTNER, contentType: 'application/json', body, request });
  }
}

/** Median and worst time of a scrape, in ms. */
async function timeScrapes(deps: Deps): Promise<[string, string]> {
  const times: number[] = [];
  for (let i = 0; i < SCRAPES; i += 1) {
    const started = performance.now();
    await deps.metrics.registry.metrics();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return [(times[Math.floor(SCRAPES / 2)] ?? 0).toFixed(1), (times.at(-1) ?? 0).toFixed(1)];
}

async function main(): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), 'amil-bench-metrics-'));
  try {
    const empty = await newDeps(path.join(root, 'empty'));
    const rows = [['empty', ...(await timeScrapes(empty))]];
    await empty.store.close();

    const deps = await newDeps(path.join(root, 'full'));
    await storePostings(deps, POSTINGS);
    rows.push(['backlog', ...(await timeScrapes(deps))]);
    await createInProcessRuntime(deps).drain();
    rows.push(['ledgered', ...(await timeScrapes(deps))]);
    await deps.store.close();

    console.log(
      `One scrape of GET /metrics (registry.metrics()), ${POSTINGS} postings, ${SCRAPES} scrapes each:`,
    );
    console.log(table(['store', 'median ms', 'worst ms'], rows));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
