/**
 * A batch the database could not take just now (another process or session held the write lock past the
 * lock wait; PostgreSQL cut the session, or takes no writes) is answered 503 with Retry-After, stores nothing, and goes in whole
 * when sent again: the bank is told to retry, not that amil broke (core/store/outage.ts).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { bankRecord, DEMO_PASSWORD, onCleanup, problemOf, startApp, type TestApp } from '../helpers.ts';
import type { BankWebhookResponse } from '../../schemas/index.ts';
import { LOCK_WAIT_MS } from '../../core/store/outage.ts';
import { startPostgres } from '../support/postgres.ts';
import { freshTestDatabase, SQLITE_APP } from '../support/test-database.ts';

async function assertOutage(app: TestApp, response: Response): Promise<void> {
  assert.equal(response.status, 503);
  assert.equal(response.headers.get('retry-after'), '2');
  const problem = await problemOf(response);
  assert.equal(problem.type, 'https://docs.amil.my/problems/unavailable');
  assert.match(problem.detail ?? '', /busy or cannot be reached.*again/);
  assert.doesNotMatch(JSON.stringify(problem), /SQLITE|locked|terminat|57P01/, 'no internals leak');
  assert.equal((await app.deps.store.bankPostings.counts()).batches, 0, 'nothing stored');
  const metrics = await app.deps.metrics.registry.metrics();
  assert.match(metrics, /amil_webhook_batches_total\{status="503"\} 1/);
  assert.match(app.logs(), /the store could not take the request/, 'ops see the cause');
  assert.ok(!app.logs().includes(DEMO_PASSWORD), 'the partner password is never logged');
}

async function assertStoredOnRetry(app: TestApp, batch: object): Promise<void> {
  const retry = await app.postBatch(batch);
  assert.equal(retry.status, 200);
  const body = (await retry.json()) as BankWebhookResponse;
  assert.deepEqual(
    body.results.map((r) => r.outcome),
    ['accepted', 'accepted'],
  );
}

/**
 * The app on a fresh PostgreSQL database, and an operator's session there (a long migration, a forgotten
 * psql transaction) holding the batches table's lock; ended with the test.
 */
async function pgAppBehindLock(t: TestContext): Promise<{ app: TestApp; other: pg.Client }> {
  const url = await freshTestDatabase();
  const app = await startApp(t, { DATABASE_URL: url });
  const other = new pg.Client({ connectionString: url });
  onCleanup(t, () => other.end());
  await other.connect();
  await other.query('BEGIN');
  await other.query('LOCK TABLE webhook_batches IN ACCESS EXCLUSIVE MODE');
  return { app, other };
}

test('SQLite: a batch that waited out the lock wait behind another process is answered 503, and goes in when sent again; the server answers everyone else meanwhile', async (t) => {
  const app = await startApp(t, SQLITE_APP);
  const other = new Database(path.join(app.dataDir, 'amil.db'));
  onCleanup(t, () => other.close());
  // Another process (a frozen worker, an operator's sqlite3 shell) holds the write lock.
  other.exec('BEGIN IMMEDIATE');
  const batch = { transactions: [bankRecord(), bankRecord()] };
  const started = Date.now();
  const answer = app.postBatch(batch);
  // The wait holds this batch only: the server answers everyone else meanwhile.
  let slowest = 0;
  let settled = false;
  void answer.finally(() => (settled = true));
  while (!settled) {
    const asked = Date.now();
    assert.equal((await fetch(`${app.url}/api/version`)).status, 200);
    slowest = Math.max(slowest, Date.now() - asked);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const response = await answer;
  const waited = Date.now() - started;
  other.exec('ROLLBACK');
  assert.ok(waited >= LOCK_WAIT_MS - 100, `it waited for the lock before giving up (${waited} ms)`);
  assert.ok(waited < 2 * LOCK_WAIT_MS, `and gave up after the lock wait (${waited} ms)`);
  assert.ok(slowest < 1000, `the server went on answering meanwhile (slowest ${slowest} ms)`);
  await assertOutage(app, response);
  await assertStoredOnRetry(app, batch);
});

test('PostgreSQL: a batch whose session the server cut is answered 503, and goes in when sent again', async (t) => {
  // The batch's write waits on the operator's lock; then its session is terminated (an operator, a failover).
  const { app, other } = await pgAppBehindLock(t);
  const batch = { transactions: [bankRecord(), bankRecord()] };
  const answer = app.postBatch(batch);
  let terminated = 0;
  for (let waited = 0; terminated === 0; waited += 20) {
    assert.ok(waited < 10_000, 'the batch never waited on the lock');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const { rows } = await other.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
    );
    terminated = rows[0]?.n ?? 0;
  }
  const response = await answer;
  await other.query('ROLLBACK');
  await assertOutage(app, response);
  await assertStoredOnRetry(app, batch);
});

test(
  'PostgreSQL: a batch that waited out the lock wait behind another session is answered 503, and goes in when sent again',
  { timeout: 60_000 },
  async (t) => {
    const { app, other } = await pgAppBehindLock(t);
    const batch = { transactions: [bankRecord(), bankRecord()] };
    const started = Date.now();
    const response = await app.postBatch(batch);
    const waited = Date.now() - started;
    await other.query('ROLLBACK');
    assert.ok(waited >= LOCK_WAIT_MS - 100, `it waited for the lock before giving up (${waited} ms)`);
    assert.ok(waited < 3 * LOCK_WAIT_MS, `and gave up once, not once per try (${waited} ms)`);
    await assertOutage(app, response);
    assert.match(app.logs(), /55P03/, 'the cause: the lock wait');
    await assertStoredOnRetry(app, batch);
  },
);

test('PostgreSQL: a batch while the server takes no writes (a standby, a demoted primary) is answered 503, and goes in once it takes writes again', async (t) => {
  const server = await startPostgres(t);
  const app = await startApp(t, { DATABASE_URL: server.url });
  await server.takeWrites(false);
  const batch = { transactions: [bankRecord(), bankRecord()] };
  await assertOutage(app, await app.postBatch(batch));
  assert.match(app.logs(), /25006/, 'the cause: a read-only server');
  await server.takeWrites(true);
  await assertStoredOnRetry(app, batch);
});

test('PostgreSQL: a batch while the server is down (its port closed) is answered 503', async (t) => {
  const server = await startPostgres(t);
  const app = await startApp(t, { DATABASE_URL: server.url });
  await server.stop();
  const response = await app.postBatch({ transactions: [bankRecord()] });
  assert.equal(response.status, 503);
  assert.equal(response.headers.get('retry-after'), '2');
  const problem = await problemOf(response);
  assert.equal(problem.type, 'https://docs.amil.my/problems/unavailable');
  assert.doesNotMatch(JSON.stringify(problem), /ECONNREFUSED|127\.0\.0\.1/, 'no internals leak');
  assert.match(app.logs(), /the store could not take the request/);
});
