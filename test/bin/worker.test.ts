import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { DEMO_PASSWORD, bankRecord, onCleanup, tempDir } from '../helpers.ts';
import { freePort } from '../support/free-port.ts';
import { startRedis, type TestRedis } from '../support/redis.ts';
import { runCli, startServer, startWorkerProcess, stopGracefully } from './processes.ts';
import { REDIS_STOP_WAIT_MS } from '../../pipeline/bullmq/queues.ts';
import { openStore } from '../../core/store/index.ts';

test('with REDIS_URL, two workers run the pipeline that npm start feeds, and amil queues shows it', async (t) => {
  const redis = await startRedis(t);
  const env = { DATA_DIR: tempDir(t), REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix };
  const server = await startServer(env);
  onCleanup(t, () => server.child.kill('SIGKILL'));
  const worker = await startWorkerProcess(env);
  onCleanup(t, () => worker.child.kill('SIGKILL'));
  const second = await startWorkerProcess(env);
  onCleanup(t, () => second.child.kill('SIGKILL'));

  const posted = await fetch(`${server.url}/api/bank/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD },
    body: JSON.stringify({ transactions: [bankRecord(), bankRecord({ agency: 'BANKPPZ' })] }),
  });
  assert.equal(posted.status, 200);
  for (let i = 0; i < 20; i += 1) {
    const more = await fetch(`${server.url}/api/bank/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD },
      body: JSON.stringify({ transactions: [bankRecord(), bankRecord({ agency: 'BANKPPZ' })] }),
    });
    assert.equal(more.status, 200);
  }

  const db = new Database(path.join(env.DATA_DIR, 'amil.db'), { readonly: true });
  onCleanup(t, () => db.close());
  const ledgerRows = () => db.prepare('SELECT count(*) FROM ledger_entries').pluck().get();
  for (let waited = 0; ledgerRows() !== 42 && waited < 15_000; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(ledgerRows(), 42, 'each posting once, however the two workers shared the jobs');

  const queues = await runCli(['queues', '--json'], env);
  assert.equal(queues.code, 0, queues.stderr);
  const report = JSON.parse(queues.stdout) as {
    runtime: string;
    counts: { queue: string; completed: number }[];
  };
  assert.equal(report.runtime, 'bullmq');
  assert.deepEqual(
    report.counts.filter((c) => c.completed > 0).map((c) => c.queue),
    ['normalise', 'ledger-LZS', 'ledger-PPZ'],
  );

  worker.child.kill('SIGTERM');
  second.child.kill('SIGTERM');
  assert.equal((await worker.exited).code, 0, 'the worker shuts down gracefully');
  assert.equal((await second.exited).code, 0);
});

test('the worker refuses to start without REDIS_URL, saying why', async (t) => {
  await assert.rejects(
    startWorkerProcess({ DATA_DIR: tempDir(t) }),
    /worker.ts exited with 1.*REDIS_URL is required/s,
  );
});

test("a worker without NODE_ENV=production refuses production's store, saying why (decision 293)", async (t) => {
  const redis = await startRedis(t);
  const dataDir = tempDir(t);
  const store = openStore(path.join(dataDir, 'amil.db'));
  await store.ops.markProduction(new Date());
  await store.close();
  const starting = startWorkerProcess({
    DATA_DIR: dataDir,
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
  });
  // A worker that did start (the test failing) is stopped with the test, not left running.
  starting.then(
    (worker) => onCleanup(t, () => worker.child.kill('SIGKILL')),
    () => undefined,
  );
  await assert.rejects(starting, /worker.ts exited with 1.*this store is production's.*NODE_ENV=production/s);
});

test('a worker stops at once after Redis went away and came back', async (t) => {
  const redis = await startRedis(t);
  const env = { DATA_DIR: tempDir(t), REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix };
  const worker = await startWorkerProcess(env);
  onCleanup(t, () => worker.child.kill('SIGKILL'));
  await redis.stop();
  await new Promise((r) => setTimeout(r, 3000));
  await redis.start();
  // Long enough for the worker's connections to come back.
  await new Promise((r) => setTimeout(r, 3000));
  await stopGracefully(worker);
});

const outages = [
  { what: 'down', begin: (redis: TestRedis) => redis.stop() },
  // Connections stay open and nothing answers, as a Redis stuck on its disk.
  { what: 'frozen', begin: (redis: TestRedis) => Promise.resolve(redis.freeze()) },
];
for (const outage of outages) {
  test(`a worker asked to stop while Redis is ${outage.what} stops all the same (BullMQ waits for Redis for ever)`, async (t) => {
    const redis = await startRedis(t);
    const env = { DATA_DIR: tempDir(t), REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix };
    const worker = await startWorkerProcess(env);
    onCleanup(t, () => worker.child.kill('SIGKILL'));
    // Connected first, then the outage.
    await new Promise((r) => setTimeout(r, 2000));
    await outage.begin(redis);
    await new Promise((r) => setTimeout(r, 2000));
    const stopping = Date.now();
    await stopGracefully(worker);
    // Down, its connections are gone, and the workers say they let go: they waited REDIS_STOP_WAIT_MS (5 s)
    // of silence first. Now and then (1 full run in 3 under load) BullMQ's close ends by itself sooner, with
    // nothing to let go of and nothing to say. Frozen and idle, its close needs no answer, so it ends before.
    if (outage.what === 'down' && Date.now() - stopping >= REDIS_STOP_WAIT_MS)
      assert.match(worker.output(), /stopping without Redis/, 'it says why');
  });
}

test('a worker whose Redis never answered stops all the same', async (t) => {
  const closed = `redis://127.0.0.1:${await freePort()}`;
  const worker = await startWorkerProcess({ DATA_DIR: tempDir(t), REDIS_URL: closed });
  onCleanup(t, () => worker.child.kill('SIGKILL'));
  await new Promise((r) => setTimeout(r, 1000));
  await stopGracefully(worker);
});
