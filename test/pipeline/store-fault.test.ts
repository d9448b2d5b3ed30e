import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { createCallbackQueue } from '../../pipeline/callbacks/queue.ts';
import { onCleanup, startApp, tempDir } from '../helpers.ts';
import { generateDay } from '../support/recon-day.ts';
import { onPostgres } from '../support/test-database.ts';
import { ledgerNow, ledgerTruth, postDay, sameLines, waitUntil } from '../support/faults.ts';
import { startMerchant } from '../support/merchant.ts';
import { paidOrders } from '../support/orders.ts';
import { startRedis } from '../support/redis.ts';

/** Mounts a small tmpfs at `dir` (needs root); returns why not when it cannot. */
function mountSmallDisk(dir: string): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (err) {
    return `cannot mount a small tmpfs to fill (${(err as Error).message.split('\n')[0]}): needs root`;
  }
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
    const dir = tempDir(t, 'amil-full-');
    const cannot = mountSmallDisk(dir);
    if (cannot) return t.skip(cannot);
    onCleanup(t, () => execFileSync('umount', ['-l', dir]));
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
    const dir = tempDir(t, 'amil-full-');
    const cannot = mountSmallDisk(dir);
    if (cannot) return t.skip(cannot);
    onCleanup(t, () => execFileSync('umount', ['-l', dir]));
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
