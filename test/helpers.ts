/** Shared test scaffolding: real SQLite files in temp dirs, the real app on 127.0.0.1. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { TestContext } from 'node:test';
import { createApp } from '../bin/create-app.ts';
import { seedDemoData } from '../core/bootstrap.ts';
import { createLogger } from '../core/logger.ts';
import type { Deps } from '../core/deps.ts';
import { listen } from '../core/http/serve.ts';
import { mintReportToken } from '../core/report-tokens.ts';
import type { BankTransaction } from '../schemas/index.ts';
import { testDatabaseEnv } from './support/test-database.ts';
import { freePort } from './support/free-port.ts';

export const DEMO_PASSWORD = 'demo-bank-password';
export const REPO_ROOT = path.resolve(import.meta.dirname, '..');

const cleanups = new WeakMap<TestContext, (() => unknown)[]>();

/**
 * Runs `fn` when the test ends, last registered first (node:test's t.after runs first registered first,
 * which would stop Redis or close the store before the pipeline using them).
 */
export function onCleanup(t: TestContext, fn: () => unknown): void {
  let stack = cleanups.get(t);
  if (!stack) {
    const fresh: (() => unknown)[] = [];
    cleanups.set(t, fresh);
    t.after(async () => {
      for (const cleanup of fresh.reverse()) await cleanup();
    });
    stack = fresh;
  }
  stack.push(fn);
}

/** A temp directory removed when the test ends. */
export function tempDir(t: TestContext, prefix = 'amil-test-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  onCleanup(t, () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface TestApp {
  url: string;
  deps: Deps;
  dataDir: string;
  /** The environment that opens this app's store in another process (`amil`, a worker): DATA_DIR, and
   * DATABASE_URL when the app runs on PostgreSQL. */
  storeEnv: Record<string, string>;
  /** Every log line the app wrote, as text. */
  logs(): string;
  postBatch(body: unknown, headers?: Record<string, string>): Promise<Response>;
}

/**
 * The real web app (all hosts on one port) over a fresh store seeded with the demo data: a SQLite file, or a
 * PostgreSQL database of its own under TEST_DATABASE=postgres (an explicit DATABASE_URL in `env` wins;
 * `SQLITE_APP` keeps a test that is about SQLite on SQLite).
 */
export async function startApp(
  t: TestContext,
  env: Record<string, string> = {},
  overrides: Partial<Deps> = {},
): Promise<TestApp> {
  const dataDir = tempDir(t);
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  // A free port chosen first, so the default PUBLIC_BASE_URL and PUBLIC_REPORTS_URL (derived from PORT, as
  // embedded mode listens) are this app's real address: QR codes and pay links point back at it.
  const port = env.PORT ?? String(await freePort());
  const app = createApp(
    // NODE_ENV=test: per-client limits high enough for tests sending many requests from 127.0.0.1.
    {
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      SEED_DEMO: 'true',
      PORT: port,
      ...('DATABASE_URL' in env ? {} : await testDatabaseEnv()),
      ...env,
    },
    { logger: createLogger(env.LOG_LEVEL ?? 'info', sink), ...overrides },
    { onePort: true },
  );
  const { deps } = app;
  await seedDemoData(deps.store, new Date());
  const listening = await listen(app.web.map((web) => ({ ...web, host: '127.0.0.1' })));
  onCleanup(t, async () => {
    await listening.close(1000);
    await app.close();
  });
  const url = listening.servers[0]?.url ?? '';
  return {
    url,
    deps,
    dataDir,
    storeEnv: {
      DATA_DIR: dataDir,
      ...(deps.config.databaseUrl !== undefined && { DATABASE_URL: deps.config.databaseUrl }),
    },
    logs: () => lines.join(''),
    postBatch: (body, headers = {}) =>
      fetch(`${url}/api/bank/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD, ...headers },
        body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
      }),
  };
}

let sequence = 0;

/** A valid bank record; each call gets a new orderno unless one is given. */
export function bankRecord(overrides: Partial<BankTransaction> = {}): BankTransaction {
  sequence += 1;
  return {
    agency: 'BANKLZS',
    orderno: `T${process.pid}-${sequence}`,
    amount: 150.5,
    name: 'Nur Aisyah binti Ahmad',
    email: 'aisyah@example.my',
    time: '2026-11-20T09:15:23+08:00',
    status: 'success',
    data: {
      email: 'aisyah@example.my',
      zakat_name: 'Nur Aisyah binti Ahmad',
      zakat_ic_no: '850312105432',
      zakat_state: 'selangor',
      zakat_type: 'zakat_pendapatan',
      zakat_year: '2026',
      zakat_phone: '0123456789',
      zakat_address: 'No 1, Jalan Damai',
      zakat_postcode: '40100',
      zakat_city: 'Shah Alam',
      zakat_amount: '150.50',
    },
    ...overrides,
  };
}

/** A fitrah record whose amount is rate x dependants. */
export function fitrahRecord(overrides: Partial<BankTransaction> = {}): BankTransaction {
  const base = bankRecord({ amount: 28 });
  return {
    ...base,
    data: {
      ...base.data,
      zakat_type: 'zakat_fitrah',
      zakat_rate: '7.00',
      zakat_dependant: '4',
      zakat_amount: '28.00',
    },
    ...overrides,
  };
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: { pointer: string; message: string; index?: number; orderno?: string }[];
  errors_truncated?: boolean;
}

export async function problemOf(response: Response): Promise<ProblemBody> {
  if (!response.headers.get('content-type')?.startsWith('application/problem+json')) {
    throw new Error(`expected application/problem+json, got ${response.headers.get('content-type')}`);
  }
  return (await response.json()) as ProblemBody;
}

/** A report token (JWT) for the agencies, minted as `amil token mint` does. */
export async function reportToken(app: TestApp, agencies: string[], now: Date = new Date()): Promise<string> {
  const { store, config } = app.deps;
  return (await mintReportToken(store, config.reportTokenSecret, { agencies, ttlSeconds: 3600, now })).token;
}

/**
 * The order a checkout URL or redirect names (`/v2/checkout/<orderNo>?t=...`): pay-link payments are each
 * an order of their own, found by their number, never by refNo.
 */
export async function orderAt(app: TestApp, urlOrResponse: string | Response) {
  const url =
    typeof urlOrResponse === 'string'
      ? urlOrResponse
      : (urlOrResponse.headers.get('location') ?? urlOrResponse.url);
  const orderNo = /\/v2\/checkout\/([^/?]+)/.exec(url)?.[1];
  assert.ok(orderNo, `no order in ${url}`);
  return app.deps.store.orders.order(decodeURIComponent(orderNo));
}
