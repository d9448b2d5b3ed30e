/**
 * Faults on real processes (issue 13): the web process, worker processes and redis-server, killed and
 * replaced while a generated day of known truth flows. Each test ends with the ledgers exactly the truth,
 * with no operator step; the recovery times go to bench/README.md.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { SMTPServer } from 'smtp-server';
import { createDeps } from '../../core/bootstrap.ts';
import { createLogger } from '../../core/logger.ts';
import { createOutboxRelay } from '../../pipeline/bullmq/outbox-relay.ts';
import { bankRecord, onCleanup, tempDir } from '../helpers.ts';
import { generateDay } from '../support/recon-day.ts';
import { ledgerNow, ledgerTruth, postDay, sameLines, waitUntil } from '../support/faults.ts';
import { freePort } from '../support/free-port.ts';
import { startRedis, type TestRedis } from '../support/redis.ts';
import { runCli, startServer, startWorkerProcess, type RunningServer } from './processes.ts';

function queueOf(t: TestContext, redis: TestRedis, name: string): Queue {
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection, prefix: redis.prefix });
  onCleanup(t, async () => {
    await queue.close();
    connection.disconnect();
  });
  return queue;
}

/** Runs the real outbox relay in this process until it has handed every row to Redis. */
async function handOverAll(env: Record<string, string>): Promise<void> {
  const deps = createDeps(env, { logger: createLogger('silent') });
  const relay = createOutboxRelay(deps, { pollMs: 50 });
  while ((await relay.handOver()) > 0);
  await relay.stop();
  await deps.store.close();
}

/**
 * Freezes a process (SIGSTOP) at a moment it holds no write lock on the SQLite store: frozen inside a write
 * transaction, it would hold the file's one lock until thawed, and every other process's write would fail.
 */
async function freezeOutsideWrites(child: RunningServer['child'], databaseFile: string): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    child.kill('SIGSTOP');
    const db = new Database(databaseFile, { fileMustExist: true });
    try {
      db.pragma('busy_timeout = 0');
      db.exec('BEGIN IMMEDIATE; ROLLBACK');
      return;
    } catch (err) {
      if (!String((err as { code?: unknown }).code).startsWith('SQLITE_BUSY') || attempt >= 50) throw err;
    } finally {
      db.close();
    }
    child.kill('SIGCONT');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function worker(t: TestContext, env: Record<string, string>): Promise<RunningServer> {
  const started = await startWorkerProcess(env);
  onCleanup(t, () => started.child.kill('SIGKILL'));
  return started;
}

test('a Redis lost with the day in it and replaced by an empty one: every posting still reaches its ledger exactly', async (t) => {
  const redis = await startRedis(t);
  const env = {
    DATA_DIR: tempDir(t),
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
    PIPELINE_RECONCILE_MS: '250',
    PIPELINE_RECONCILE_GRACE_MS: '1000',
  };
  const server = await startServer(env);
  onCleanup(t, () => server.child.kill('SIGKILL'));
  const running = await worker(t, env);
  // Frozen, so the day's jobs sit in Redis when it dies; thawed later, never restarted.
  const file = path.join(env.DATA_DIR, 'amil.db');
  await freezeOutsideWrites(running.child, file);

  const generated = generateDay(1500);
  await postDay(server.url, generated);
  // The relay hands the whole outbox to Redis (this process runs it, the worker being frozen).
  await handOverAll(env);
  const waiting = await queueOf(t, redis, 'normalise').getWaitingCount();
  assert.ok(waiting >= 20, `the normalise jobs are in Redis (${waiting})`);

  await redis.stop(); // SIGKILL: nothing saved
  await redis.start(); // a fresh, empty redis-server on the same port
  const probe = new Redis(redis.url);
  onCleanup(t, () => probe.disconnect());
  assert.equal(await probe.dbsize(), 0, 'the new Redis holds nothing');

  const thawed = Date.now();
  running.child.kill('SIGCONT');
  const truth = ledgerTruth(generated);
  await waitUntil(() => sameLines(ledgerNow(file), truth), 90_000, 'the ledgers to match the truth');
  t.diagnostic(`recovered in ${Date.now() - thawed} ms after the worker resumed on the empty Redis`);
  assert.deepEqual(ledgerNow(file), truth);

  assert.equal(running.child.exitCode, null, 'the same worker did it');
});

test('a job whose worker is SIGKILLed twice mid-job still completes on the next worker', async (t) => {
  const redis = await startRedis(t);
  const env = {
    DATA_DIR: tempDir(t),
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
    WORKER_LOCK_MS: '1000',
    // Only the stalled-job handling may save the job here, not the reconciler's re-drive.
    PIPELINE_RECONCILE_GRACE_MS: '600000',
  };
  const server = await startServer(env);
  onCleanup(t, () => server.child.kill('SIGKILL'));
  const posted = await fetch(`${server.url}/api/bank/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-password': 'demo-bank-password' },
    body: JSON.stringify({ transactions: [bankRecord(), bankRecord({ agency: 'BANKPPZ' })] }),
  });
  assert.equal(posted.status, 200);
  await handOverAll(env); // so the workers' relays find nothing to write while the lock below is held

  // The test holds the database's write lock: the normalise job blocks mid-job, where the kill lands.
  const lock = new Database(path.join(env.DATA_DIR, 'amil.db'));
  onCleanup(t, () => lock.close());
  lock.exec('BEGIN IMMEDIATE');
  const normalise = queueOf(t, redis, 'normalise');
  const jobInFlight = async (stalls: number) => {
    for (const job of await normalise.getActive()) {
      if ((job.stalledCounter ?? 0) >= stalls) return true;
    }
    return false;
  };
  const until = async (check: () => Promise<boolean>, what: string) => {
    for (let waited = 0; !(await check()); waited += 100) {
      if (waited > 60_000) assert.fail(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  for (const stalls of [0, 1]) {
    const doomed = await worker(t, env);
    await until(() => jobInFlight(stalls), `the job in flight after ${stalls} stalls`);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
  }
  const last = await worker(t, env);
  await until(() => jobInFlight(2), 'the job handed back after the second crash');
  const released = Date.now();
  lock.exec('COMMIT');

  const file = path.join(env.DATA_DIR, 'amil.db');
  const count = () => ledgerNow(file).length;
  await waitUntil(() => count() === 2, 30_000, 'both postings in their ledgers');
  t.diagnostic(`completed ${Date.now() - released} ms after the lock was released`);
  assert.deepEqual(await normalise.getFailed(), [], 'no job failed for good');
  assert.equal(last.child.exitCode, null);
});

test('an SMTP server down far past the old retry budget: the workbook e-mail goes out once it is back', async (t) => {
  const redis = await startRedis(t);
  const smtpPort = await freePort();
  const env = {
    DATA_DIR: tempDir(t),
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    // The production horizon is hours; shrunk so the test runs in seconds, with the same shape.
    PIPELINE_RETRY_BASE_MS: '50',
    PIPELINE_RETRY_MAX_MS: '300',
    PIPELINE_RETRY_HORIZONS: 'recon-email=60000',
  };
  const server = await startServer(env); // seeds the demo agencies and their report recipients
  onCleanup(t, () => server.child.kill('SIGKILL'));
  await worker(t, env);
  const run = await runCli(['recon', 'run', '--day', '2026-11-19', '--agency', 'LZS'], env);
  assert.equal(run.code, 0, run.stderr);

  const emails = queueOf(t, redis, 'recon-email');
  const attempts = async () =>
    Math.max(
      0,
      ...(await emails.getJobs(['delayed', 'waiting', 'active', 'failed', 'completed'])).map(
        (j) => j.attemptsMade,
      ),
    );
  const OLD_BUDGET = 8;
  for (let waited = 0; (await attempts()) <= OLD_BUDGET + 2; waited += 100) {
    if (waited > 30_000) assert.fail(`the e-mail job stopped retrying at ${await attempts()} attempts`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.deepEqual(await emails.getFailed(), [], 'still retrying, not failed for good');

  const received: string[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        received.push(session.envelope.rcptTo.map((r) => r.address).join(','));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(smtpPort, '127.0.0.1', resolve));
  onCleanup(t, () => new Promise<void>((resolve) => smtp.close(() => resolve())));
  const back = Date.now();
  await waitUntil(() => received.length > 0, 30_000, 'the e-mail');
  t.diagnostic(
    `sent ${Date.now() - back} ms after the SMTP server came back, after ${await attempts()} attempts`,
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.deepEqual(received, ['kewangan@lzs.example.my'], 'sent once');
});
