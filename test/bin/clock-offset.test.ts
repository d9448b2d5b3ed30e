/**
 * Machines whose clocks disagree with PostgreSQL's (decision 259), made for real: the web process and the
 * worker run under libfaketime (Debian's `faketime`), their clocks 30 s off the machine's, against a real
 * PostgreSQL (and Redis for the worker). Readiness fails naming the clock, the metric shows the offset, and
 * the worker logs an error; a process whose clock agrees is ready on the same database.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_ADMIN_PASSWORD } from '../../core/config.ts';
import { openPgPool } from '../../core/store/pg/pool.ts';
import { tempDir } from '../helpers.ts';
import { startPostgres } from '../support/postgres.ts';
import { startRedis } from '../support/redis.ts';
import { sample, scrape } from '../support/metrics.ts';
import { readiness, readyWithin, startServer, startWorkerProcess } from './processes.ts';

const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/** The environment that sets a process's clock `offset` off the machine's (timers keep the real pace). */
function clockOff(offset: string): Record<string, string> {
  assert.ok(existsSync(FAKETIME_LIB), `${FAKETIME_LIB} is missing: apt-get install faketime`);
  return { LD_PRELOAD: FAKETIME_LIB, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
}

const admin = { authorization: `Basic ${Buffer.from(`admin:${DEMO_ADMIN_PASSWORD}`).toString('base64')}` };

test('a web process whose clock is 30 s ahead of PostgreSQL is not ready, and says why; one whose clock agrees is', async (t) => {
  const pg = await startPostgres(t);
  const url = await pg.createTestDatabase();
  const right = await startServer({ DATA_DIR: tempDir(t), DATABASE_URL: url });
  t.after(() => right.child.kill('SIGKILL'));
  const ahead = await startServer({ DATA_DIR: tempDir(t), DATABASE_URL: url, ...clockOff('+30s') });
  t.after(() => ahead.child.kill('SIGKILL'));

  assert.equal((await fetch(`${right.url}/health/ready`)).status, 200);
  // Each process's sessions name it, its machine and its pid: a lock or a long transaction is found where it
  // runs. A URL's own application_name wins.
  const db = openPgPool(`${url}?application_name=amil-test-probe`);
  t.after(() => db.close());
  const names = await db.rows<{ name: string }>(
    "SELECT DISTINCT application_name AS name FROM pg_stat_activity WHERE application_name LIKE 'amil%'",
  );
  const expected = [right, ahead].map((p) => `amil server ${p.child.pid} ${hostname()}`);
  for (const name of expected)
    assert.ok(
      names.some((n) => n.name === name),
      `${name} in ${JSON.stringify(names)}`,
    );
  assert.ok(names.some((n) => n.name === 'amil-test-probe'));
  const offsetOk = sample(await scrape(right.url, admin), 'amil_clock_offset_seconds');
  assert.ok(offsetOk !== undefined && Math.abs(offsetOk) < 1, `offset ${offsetOk}`);

  const notReady = await readiness(ahead.url);
  assert.equal(notReady.status, 503);
  assert.match(notReady.detail, /Not ready: clock\./);
  assert.deepEqual(notReady.failing, ['/checks/clock']);
  assert.equal((await fetch(`${ahead.url}/health/live`)).status, 200, 'alive: a restart would not help');
  const text = await scrape(ahead.url, admin);
  const offset = sample(text, 'amil_clock_offset_seconds');
  assert.ok(offset !== undefined && offset > 29 && offset < 31, `offset ${offset}`);
  assert.equal(sample(text, 'amil_ready', { dependency: 'clock' }), 0);
  assert.equal(sample(text, 'amil_ready', { dependency: 'store' }), 1);
  assert.match(ahead.output(), /this machine's clock is 3\d\.\d s ahead of the database's/);

  // A database that does not answer is the store's failure, not the clock's.
  await pg.crash();
  const down = await readiness(right.url);
  assert.equal(down.status, 503);
  assert.deepEqual(down.failing, ['/checks/store']);
  await pg.restart();
  assert.equal(await readyWithin(right.url, 15_000), 200);
});

test('a worker whose clock is 30 s behind PostgreSQL logs an error saying so', async (t) => {
  const pg = await startPostgres(t);
  const redis = await startRedis(t);
  const env = { DATA_DIR: tempDir(t), DATABASE_URL: await pg.createTestDatabase(), REDIS_URL: redis.url };
  const worker = await startWorkerProcess(
    { ...env, ...clockOff('-30s') },
    /(this machine's clock is) .* the database's/,
  );
  t.after(() => worker.child.kill('SIGKILL'));
  const line = worker
    .output()
    .split('\n')
    .find((l) => l.includes("this machine's clock"));
  const logged = JSON.parse(line ?? '{}') as { level: number; msg: string; offset_ms: number };
  assert.equal(logged.level, 50, 'an error');
  assert.match(logged.msg, /3\d\.\d s behind the database's .*NTP/);
  assert.ok(logged.offset_ms < -29_000 && logged.offset_ms > -31_000, String(logged.offset_ms));
});
