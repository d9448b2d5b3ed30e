import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { createCallbackQueue } from '../../pipeline/callbacks/queue.ts';
import { CALLBACK_CONCURRENCY } from '../../pipeline/callbacks/deliver.ts';
import { CALLBACK_ID_HEADER } from '../../core/payments/callback-fields.ts';
import { onCleanup, startApp, tempDir, type TestApp } from '../helpers.ts';
import { generateDay } from '../support/recon-day.ts';
import { onPostgres } from '../support/test-database.ts';
import { ledgerNow, ledgerTruth, postDay, sameLines, waitUntil } from '../support/faults.ts';
import { startMerchant } from '../support/merchant.ts';
import { paidOrders } from '../support/orders.ts';
import { startRedis } from '../support/redis.ts';
import { startPostgres } from '../support/postgres.ts';
import pg from 'pg';
import { LOCK_WAIT_MS } from '../../core/store/outage.ts';

/** Mounts a small tmpfs at `dir` (needs root); returns why not when it cannot. */
function mountSmallDisk(dir: string): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (err) {
    return `cannot mount a small tmpfs to fill (${(err as Error).message.split('\n')[0]}): needs root`;
  }
}

/** A small tmpfs for the test's data, unmounted after it; undefined when the test was skipped (not root). */
function smallDiskOrSkip(t: TestContext): string | undefined {
  const dir = tempDir(t, 'amil-full-');
  const cannot = mountSmallDisk(dir);
  if (cannot) {
    t.skip(cannot);
    return undefined;
  }
  onCleanup(t, () => execFileSync('umount', ['-l', dir]));
  return dir;
}

/** Fills the filesystem of `dir` to the last byte; returns the filler file, whose removal frees it. */
function fillDisk(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    // Then the last few bytes, so not even a small write fits.
    try {
      for (;;) writeSync(fd, Buffer.alloc(512));
    } catch {
      // full
    }
  } finally {
    closeSync(fd);
  }
  return file;
}

/**
 * Empties the SQLite file's WAL, so the pipeline's next write must grow a file, then fills the disk under
 * it; returns the filler file, whose removal frees the disk.
 */
function fillUnder(databaseFile: string, dir: string): string {
  const probe = new Database(databaseFile);
  probe.pragma('wal_checkpoint(TRUNCATE)');
  probe.close();
  return fillDisk(dir);
}

/**
 * Starts `runner` on the full disk and, 3 s later, checks that its component backed off: a few log lines,
 * not one per attempt, one of them saying the store cannot write. Returns those lines.
 */
async function linesWhileFull(
  app: { logs(): string },
  runner: { start(): void },
  component: string,
): Promise<string[]> {
  const logged = app.logs().length;
  runner.start();
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const during = app
    .logs()
    .slice(logged)
    .split('\n')
    .filter((line) => line.includes(`"component":"${component}"`));
  assert.ok(during.length <= 3, `a few lines in 3 s, not one per attempt: ${during.length}`);
  assert.ok(
    during.some((line) => line.includes('the store cannot write')),
    during.join('\n'),
  );
  return during;
}

test(
  'embedded mode on a full disk backs off with a few log lines, and the day reaches the ledgers when space returns',
  { skip: onPostgres && 'SQLite only: it fills a tmpfs under the SQLite file' },
  async (t) => {
    const dir = smallDiskOrSkip(t);
    if (!dir) return;
    const app = await startApp(t, {
      DATA_DIR: dir,
      PIPELINE_RETRY_BASE_MS: '50',
      STORE_FAULT_MAX_MS: '400',
      STORE_FAULT_LOG_MS: '60000',
    });
    const generated = generateDay(300);
    await postDay(app.url, generated); // committed: the work waits in the outbox
    const filler = fillUnder(app.deps.config.databaseFile, dir);

    const relay = createInProcessRuntime(app.deps, { pollMs: 20 });
    onCleanup(t, () => relay.stop());
    const during = await linesWhileFull(app, relay, 'relay');
    assert.deepEqual(ledgerNow(app.deps.config.databaseFile), [], 'nothing written meanwhile');

    rmSync(filler);
    const freed = Date.now();
    const truth = ledgerTruth(generated);
    await waitUntil(
      () => sameLines(ledgerNow(app.deps.config.databaseFile), truth),
      30_000,
      'the ledgers to match the truth',
    );
    t.diagnostic(
      `recovered ${Date.now() - freed} ms after space returned; ${during.length} relay log line(s) in 3 s`,
    );
    assert.match(app.logs(), /the store writes again/);
  },
);

test(
  'a worker leasing callbacks on a full disk backs off with a few log lines, and delivers them when space returns',
  { skip: onPostgres && 'SQLite only: it fills a tmpfs under the SQLite file' },
  async (t) => {
    const dir = smallDiskOrSkip(t);
    if (!dir) return;
    const redis = await startRedis(t);
    const app = await startApp(t, {
      DATA_DIR: dir,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: redis.prefix,
      PIPELINE_RETRY_BASE_MS: '50',
      STORE_FAULT_MAX_MS: '400',
      STORE_FAULT_LOG_MS: '60000',
    });
    const merchant = await startMerchant(t, () => 200);
    const orderNos = await paidOrders(app.deps.store.orders, `${merchant.url}/callback`, 5);
    const filler = fillUnder(app.deps.config.databaseFile, dir);

    // The callbacks' queue alone, as a worker runs it (decisions 218, 264): its lease is a write.
    const callbacks = createCallbackQueue(app.deps, { pollMs: 20, leaseMs: 40_000 });
    onCleanup(t, () => callbacks.stop());
    await linesWhileFull(app, callbacks, 'callback-queue');
    assert.equal(merchant.received.length, 0, 'nothing leased, so nothing sent, meanwhile');

    rmSync(filler);
    await merchant.waitFor(orderNos.length, 30_000);
    await callbacks.drain(); // the last finishes committed
    assert.match(app.logs(), /the store writes again/);
    for (const orderNo of orderNos) {
      const [callback] = await app.deps.store.callbacks.ofOrder(orderNo);
      assert.equal(callback?.attemptLog.length, 1, orderNo);
    }
  },
);

/** Times each callback id arrived, by id. */
function timesSent(arrivals: readonly string[]): Map<string, number> {
  const sent = new Map<string, number>();
  for (const id of arrivals) sent.set(id, (sent.get(id) ?? 0) + 1);
  return sent;
}

/**
 * A merchant that holds every answer (200) until `release()`, then answers at once (`answerWaiting()`
 * answers those held so far and holds the next); `arrivals` lists each request's callback in arrival order,
 * by its row id (the end of its callback id, `<orderNo>-<row id>`).
 */
async function heldMerchant(t: TestContext) {
  const arrivals: string[] = [];
  const waiting: (() => void)[] = [];
  let holding = true;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.push(String(req.headers[CALLBACK_ID_HEADER.toLowerCase()]).replace(/^.*-/, ''));
      const answer = () => res.writeHead(200).end('OK');
      if (holding) waiting.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  t.after(() => server.closeAllConnections());
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    arrivals,
    answerWaiting(): void {
      for (const answer of waiting.splice(0)) answer();
    },
    release(): void {
      holding = false;
      for (const answer of waiting.splice(0)) answer();
    },
  };
}

/** The app settings of the tests below: an attempt takes 1 s at most, and a fault is retried within 0.4 s. */
const FAST_FAULTS = {
  CALLBACK_TIMEOUT_MS: '1000',
  PIPELINE_RETRY_BASE_MS: '50',
  STORE_FAULT_MAX_MS: '400',
  STORE_FAULT_LOG_MS: '60000',
};

/** The callbacks of the tests below: every lane busy, as many leased and waiting, and a few not leased yet. */
const LATE_CALLBACKS = 6;
const TOTAL_CALLBACKS = 2 * CALLBACK_CONCURRENCY + LATE_CALLBACKS;

/**
 * Pays TOTAL_CALLBACKS orders whose callbacks go to a merchant that holds its answers, and starts a
 * callbacks' queue on `app` (leases of `leaseMs`); resolves once every lane is sending.
 */
async function lanesBusy(t: TestContext, app: TestApp, leaseMs: number) {
  const merchant = await heldMerchant(t);
  await paidOrders(app.deps.store.orders, merchant.url, TOTAL_CALLBACKS);
  const callbacks = createCallbackQueue(app.deps, { pollMs: 20, leaseMs });
  onCleanup(t, () => callbacks.stop());
  callbacks.start();
  await waitUntil(
    () => merchant.arrivals.length === CALLBACK_CONCURRENCY,
    10_000,
    'every lane to be sending',
  );
  return { merchant, callbacks };
}

/**
 * Every lane of a process's callbacks' queue waits on the merchant, with as many callbacks leased and
 * waiting in the process; then the store stops taking writes (`cannotWrite`, which returns what gives them
 * back) and the merchant answers. None of the waiting callbacks may be sent until the store writes again;
 * after, every callback is delivered with one attempt recorded, those whose attempt could not be recorded
 * sent twice with the same callback id (after their lease ran out), the others once.
 */
async function leasedWhileStoreCannotWrite(
  t: TestContext,
  app: TestApp,
  cannotWrite: () => Promise<() => Promise<void>>,
): Promise<void> {
  // A lease of 12 s leaves room for an attempt (1 s and the 5 s margin) that waited a while for a lane.
  const { merchant, callbacks } = await lanesBusy(t, app, 12_000);
  const total = TOTAL_CALLBACKS;
  const ids = (await app.deps.store.callbacks.list({ limit: 1000 })).map((c) => c.id);
  assert.equal(ids.length, total);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(merchant.arrivals.length, CALLBACK_CONCURRENCY, 'no more than the lanes at once');

  // The store stops taking writes while the merchant holds its answers: the attempts made cannot be recorded.
  const writesAgain = await cannotWrite();
  merchant.release();
  await waitUntil(() => app.logs().includes('the store cannot write'), 10_000, 'the fault to be seen');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(
    merchant.arrivals.length,
    CALLBACK_CONCURRENCY,
    'none of the leased callbacks waiting in the process was sent while the store could not write',
  );

  await writesAgain();
  await waitUntil(
    () => new Set(merchant.arrivals).size === total,
    30_000,
    'every callback to reach the merchant',
  );
  await callbacks.drain();
  const sent = timesSent(merchant.arrivals);
  const first = new Set(merchant.arrivals.slice(0, CALLBACK_CONCURRENCY));
  const stored = await app.deps.store.callbacks.list({ limit: 1000 });
  for (const id of ids) {
    const callback = stored.find((c) => c.id === id);
    assert.equal(callback?.state, 'delivered', `callback ${id}`);
    assert.equal(callback.attempts, 1, `callback ${id}: one attempt recorded`);
    assert.equal(sent.get(String(id)), first.has(String(id)) ? 2 : 1, `callback ${id}: times sent`);
  }
  assert.match(app.logs(), /the store writes again/);
}

test(
  'leased callbacks waiting in a process are not sent while the disk is full, and every one is delivered after',
  { skip: onPostgres && 'SQLite only: it fills a tmpfs under the SQLite file' },
  async (t) => {
    const dir = smallDiskOrSkip(t);
    if (!dir) return;
    const app = await startApp(t, { DATA_DIR: dir, ...FAST_FAULTS });
    await leasedWhileStoreCannotWrite(t, app, () => {
      const filler = fillUnder(app.deps.config.databaseFile, dir);
      return Promise.resolve(() => Promise.resolve(rmSync(filler)));
    });
  },
);

test('PostgreSQL: leased callbacks waiting in a process are not sent while the server takes no writes, and every one is delivered after', async (t) => {
  const server = await startPostgres(t);
  const app = await startApp(t, { DATABASE_URL: server.url, ...FAST_FAULTS });
  await leasedWhileStoreCannotWrite(t, app, async () => {
    await server.takeWrites(false);
    return () => server.takeWrites(true);
  });
});

/**
 * A session of the test's own on `url`, ended with the test. The server is stopped before it (the server's
 * cleanup was registered first): that termination is not the test's error.
 */
async function session(t: TestContext, url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  t.after(() => client.end().catch(() => undefined));
  return client;
}

/**
 * Decision 265's guard: a lease on its way when a write failed may have been made before the store stopped
 * writing, and proves nothing. Here a lease waits (another session holds a table it reads) while the store
 * stops taking writes and attempts fail to be recorded; then it goes on, writes and returns callbacks. None
 * of them may be sent before the store writes again (the fault must not end on that lease).
 */
test('PostgreSQL: a lease that returns after a write failed sends nothing until the store writes again', async (t) => {
  const server = await startPostgres(t);
  // The merchant holds the second POSTs until the server refuses writes: they must not time out first
  // (5 s), and a lease leaves room for an attempt and the 5 s margin after waiting for a lane (20 s).
  const app = await startApp(t, { DATABASE_URL: server.url, ...FAST_FAULTS, CALLBACK_TIMEOUT_MS: '5000' });
  const { merchant, callbacks } = await lanesBusy(t, app, 20_000);
  const total = TOTAL_CALLBACKS;

  // Every lease from now on waits at its start: it reads the agencies, which another session holds.
  const holder = await session(t, server.url);
  await holder.query('BEGIN');
  await holder.query('LOCK TABLE agencies IN ACCESS EXCLUSIVE MODE');
  // The first deliveries are recorded; the lanes take the callbacks waiting in the process (held by the
  // merchant), and with half of what the process may hold free it leases the last ones: that lease waits.
  merchant.answerWaiting();
  const leaseWaitsSince = Date.now();
  const watcher = await session(t, server.url);
  const leaseWaiting = async () =>
    (
      await watcher.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE wait_event_type = 'Lock' AND query LIKE '%due AS MATERIALIZED%'`,
      )
    ).rows[0]!.n === 1;
  await waitUntil(leaseWaiting, 10_000, 'the lease to wait for the agencies');
  await waitUntil(
    () => merchant.arrivals.length === 2 * CALLBACK_CONCURRENCY,
    10_000,
    'the lanes to send the callbacks they held',
  );

  // While that lease waits, the store stops taking writes and the second deliveries cannot be recorded.
  await server.takeWrites(false);
  merchant.release();
  await waitUntil(() => app.logs().includes('the store cannot write'), 10_000, 'the fault to be seen');
  const leasedUnsent = async () =>
    (
      await watcher.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM callbacks WHERE attempts = 0 AND lease_until IS NOT NULL`,
      )
    ).rows[0]!.n;
  assert.equal(
    await leasedUnsent(),
    CALLBACK_CONCURRENCY,
    'before the waiting lease goes on: the 32 sent last are leased, the last 6 are not',
  );
  // Past the store's lock wait the lease would give up by itself, and its retry would find no writes.
  assert.ok(
    Date.now() - leaseWaitsSince < LOCK_WAIT_MS,
    `the lease waited ${Date.now() - leaseWaitsSince} ms, past the store's lock wait: this machine was too slow for the test`,
  );
  // The lease goes on: it began before the store stopped writing, so it writes and returns the last ones.
  await holder.query('ROLLBACK');
  await waitUntil(async () => !(await leaseWaiting()), 10_000, 'the lease to go on');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(
    await leasedUnsent(),
    CALLBACK_CONCURRENCY + LATE_CALLBACKS,
    'the lease went through: the last ones are leased',
  );
  assert.equal(
    merchant.arrivals.length,
    2 * CALLBACK_CONCURRENCY,
    'nothing the late lease took was sent while the store could not write',
  );
  assert.doesNotMatch(app.logs(), /the store writes again/);

  await server.takeWrites(true);
  await waitUntil(
    () => new Set(merchant.arrivals).size === total,
    60_000,
    'every callback to reach the merchant',
  );
  await callbacks.drain();
  const sent = timesSent(merchant.arrivals);
  const unrecorded = new Set(merchant.arrivals.slice(CALLBACK_CONCURRENCY, 2 * CALLBACK_CONCURRENCY));
  const stored = await app.deps.store.callbacks.list({ limit: 1000 });
  assert.equal(stored.length, total);
  for (const callback of stored) {
    assert.equal(callback.state, 'delivered', `callback ${callback.id}`);
    assert.equal(callback.attempts, 1, `callback ${callback.id}: one attempt recorded`);
    assert.equal(
      sent.get(String(callback.id)),
      unrecorded.has(String(callback.id)) ? 2 : 1,
      `callback ${callback.id}: times sent`,
    );
  }
});
