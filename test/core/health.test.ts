import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { bankRecord, onCleanup, startApp, tempDir } from '../helpers.ts';
import { onPostgres } from '../support/test-database.ts';
import { readiness } from '../bin/processes.ts';

/** A real tmpfs of `size` mounted on a fresh directory (root only); undefined where mounting is not allowed. */
function mountTmpfs(t: Parameters<typeof tempDir>[0], size: string): string | undefined {
  const dir = tempDir(t, 'amil-tmpfs-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  onCleanup(t, () => execFileSync('umount', ['-l', dir]));
  return dir;
}

/** Writes until the filesystem has no byte left; returns the filler file. */
function fillUp(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = openSync(file, 'w');
  for (const size of [1024 * 1024, 4096, 1]) {
    const chunk = Buffer.alloc(size);
    try {
      for (;;) writeSync(fd, chunk);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    }
  }
  closeSync(fd);
  return file;
}

test('liveness and readiness both answer 200 with status ok, and /health is readiness', async (t) => {
  const app = await startApp(t);
  for (const probe of ['/health/live', '/health/ready', '/health']) {
    const res = await fetch(`${app.url}${probe}`);
    assert.equal(res.status, 200, probe);
    assert.deepEqual(await res.json(), { status: 'ok' });
  }
});

test(
  'a full disk makes readiness 503 naming the store while liveness stays 200, and readiness returns when space does',
  { skip: onPostgres && 'SQLite only: it fills a tmpfs under the SQLite file' },
  async (t) => {
    const disk = mountTmpfs(t, '8m');
    if (!disk) {
      t.skip('mounting a tmpfs needs root; this machine does not allow it');
      return;
    }
    const app = await startApp(t, { DATA_DIR: disk });
    assert.equal((await fetch(`${app.url}/health/ready`)).status, 200);

    const filler = fillUp(disk);
    const ready = await readiness(app.url);
    assert.equal(ready.status, 503);
    assert.equal(ready.contentType, 'application/problem+json');
    assert.deepEqual(ready.failing, ['/checks/store']);
    assert.match(ready.detail, /store/);
    assert.equal((await fetch(`${app.url}/health`)).status, 503);
    assert.equal((await fetch(`${app.url}/health/live`)).status, 200);
    // What the probe predicts is what the bank would get: the batch is not acknowledged, and the bank is
    // told to send it again (core/store/outage.ts), not that amil failed.
    const refused = await app.postBatch({ transactions: [bankRecord()] });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '2');

    rmSync(filler);
    assert.equal((await fetch(`${app.url}/health/ready`)).status, 200);
    assert.equal((await app.postBatch({ transactions: [bankRecord()] })).status, 200);
  },
);
