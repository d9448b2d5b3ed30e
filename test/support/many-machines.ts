/**
 * The many-machines test's cluster: web processes and workers as real child processes, all on one
 * PostgreSQL and one Redis, each with a data directory of its own (as separate machines have).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { onCleanup, tempDir } from '../helpers.ts';
import { startServer, startWorkerProcess, type RunningServer } from '../bin/processes.ts';
import { signPost } from '../../core/signatures.ts';
import { LZS_KEY } from './merchant.ts';

export interface Machine {
  dir: string;
  process: RunningServer;
}

/** What every machine of a cluster is given: the shared database and Redis (with a prefix of its own). */
export function clusterEnv(
  postgres: { url: string },
  redis: { url: string; prefix: string },
  more: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: postgres.url,
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
    LOG_LEVEL: 'info',
    ...more,
  };
}

/**
 * Starts a web process or worker on its own data directory, resolving once it is ready (or once its output
 * matches `until`: processes.ts); SIGKILLed when the test ends.
 */
export async function startMachine(
  t: TestContext,
  kind: 'web' | 'worker',
  env: Record<string, string>,
  dir = tempDir(t),
  until?: RegExp,
): Promise<Machine> {
  const machineEnv = { ...env, DATA_DIR: dir };
  const process = await (kind === 'web'
    ? startServer(machineEnv, [], until)
    : startWorkerProcess(machineEnv, until));
  onCleanup(t, () => process.child.kill('SIGKILL'));
  return { dir, process };
}

/** Kills a machine without warning (SIGKILL) and waits until it is gone. */
export async function killHard(machine: Machine): Promise<void> {
  machine.process.child.kill('SIGKILL');
  await machine.process.exited;
}

/** One query's rows on the shared database. */
export async function queryRows<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** Polls `check` until it returns true, or fails after `ms` saying what it waited for. */
export async function waitUntil(check: () => Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The data directory, among the machines', that holds a run's workbook (relative to its DATA_DIR). */
export function workbookOf(machines: Machine[], file: string): string {
  const found = machines.map((m) => path.join(m.dir, file)).find((f) => existsSync(f));
  if (!found) throw new Error(`no machine holds ${file}`);
  return found;
}

/** The machine's log lines above info (warnings, errors, fatal), for a failure's diagnosis. */
export function complaints(machine: Machine): string {
  return machine.process
    .output()
    .split('\n')
    .filter((line) => /"level":(40|50|60)/.test(line) || (line.trim() !== '' && !line.startsWith('{')))
    .slice(-40)
    .join('\n');
}

/** Where the day's postings are: stored, normalised, ledgered, and the outbox's unfinished rows per queue. */
export async function pipelineState(url: string, redis: { url: string; prefix: string }): Promise<string> {
  const counts = await queryRows(
    url,
    `SELECT (SELECT count(*) FROM bank_postings) AS stored,
            (SELECT count(*) FROM normalised_postings) AS normalised,
            (SELECT count(*) FROM ledger_entries) AS ledgered,
            (SELECT count(*) FROM recon_runs) AS runs,
            (SELECT count(*) FROM recon_deliveries WHERE outcome = 'sent') AS mailed,
            (SELECT max(detail) FROM recon_deliveries WHERE outcome = 'failed') AS mail_error`,
  );
  const outbox = await queryRows(
    url,
    `SELECT queue, count(*) FILTER (WHERE sent_at IS NULL AND failed_at IS NULL) AS unsent,
            count(*) FILTER (WHERE sent_at IS NOT NULL AND done_at IS NULL) AS sent_not_done,
            count(*) FILTER (WHERE failed_at IS NOT NULL) AS failed, max(last_error) AS last_error
       FROM outbox GROUP BY queue ORDER BY queue`,
  );
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  try {
    const keys = (await client.keys(`${redis.prefix}:*`)).filter((k) => !/:\d+$|:logs$/.test(k)).sort();
    const sizes = await Promise.all(
      keys.map(async (k) => {
        const type = await client.type(k);
        const size = type === 'list' ? await client.llen(k) : type === 'zset' ? await client.zcard(k) : type;
        return `${k}=${size}`;
      }),
    );
    return JSON.stringify({ counts, outbox, redis: sizes }, null, 1);
  } finally {
    client.disconnect();
  }
}

/** A checkout order made on one web process and paid (sandbox bank SBX00: paid at once) on the other. */
export async function payAcross(
  makeOn: string,
  payOn: string,
  returnUrl: string,
  nth: number,
): Promise<string> {
  const made = await fetch(`${makeOn}/v2/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: signPost(
      { agency: 'LZS', refNo: `MANY-${nth}`, amount: '25.00', email: 'ali@example.my', returnUrl },
      LZS_KEY,
    ).body,
  });
  assert.equal(made.status, 201, await made.clone().text());
  const { orderNo, checkoutUrl } = (await made.json()) as { orderNo: string; checkoutUrl: string };
  const token = new URL(checkoutUrl, makeOn).searchParams.get('t') ?? '';
  const paid = await fetch(`${payOn}/v2/checkout/${orderNo}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ t: token, method: 'fpx', bank: 'SBX00' }).toString(),
    redirect: 'manual',
  });
  assert.equal(paid.status, 303);
  // The payer's browser comes back to the return page, which asks the acquirer and settles the order.
  const back = await fetch(new URL(paid.headers.get('location') ?? '', payOn), {
    headers: { accept: 'text/html' },
  });
  assert.equal(back.status, 200);
  return orderNo;
}
