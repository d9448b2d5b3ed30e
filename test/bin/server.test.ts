import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { DEMO_PASSWORD, bankRecord, onCleanup, tempDir } from '../helpers.ts';
import { DEMO_ADMIN_PASSWORD } from '../../core/config.ts';
import { freePort } from '../support/free-port.ts';
import { startRedis } from '../support/redis.ts';
import { sample, scrape } from '../support/metrics.ts';
import { readyWithin, runCli, startServer, stopGracefully } from './processes.ts';

test('npm start serves every host on one port, with the demo password seeded', async (t) => {
  const dataDir = tempDir(t);
  const server = await startServer({ DATA_DIR: dataDir });
  t.after(() => server.child.kill('SIGKILL'));
  const health = await fetch(`${server.url}/health`);
  assert.deepEqual(await health.json(), { status: 'ok' });
  // The start-up log says where to go: the landing page and the demo shop, on the address it serves.
  for (let waited = 0; !server.output().includes('open in a browser') && waited < 5000; waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const where = server
    .output()
    .split('\n')
    .find((line) => line.includes('open in a browser'));
  assert.ok(where, server.output());
  const said = JSON.parse(where) as { landing: string; shop: string };
  assert.equal((await fetch(said.landing, { headers: { accept: 'text/html' } })).status, 200);
  assert.equal((await fetch(said.shop)).status, 200);
  const openapi = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as { openapi: string };
  assert.equal(openapi.openapi, '3.1.0');
  const posted = await fetch(`${server.url}/api/bank/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD },
    body: JSON.stringify({ transactions: [bankRecord()] }),
  });
  assert.equal(posted.status, 200);

  // The in-process pipeline picks the batch up from the outbox and fills the agency's ledger.
  const db = new Database(path.join(dataDir, 'amil.db'), { readonly: true });
  t.after(() => db.close());
  const ledgerRows = () => db.prepare("SELECT count(*) FROM ledger_entries WHERE sink = 'LZS'").pluck().get();
  for (let waited = 0; ledgerRows() === 0 && waited < 10_000; waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(ledgerRows(), 1);
  // (At start the nightly scheduler also queues yesterday's reconciliation, which has its own queues.)
  assert.equal(
    db
      .prepare("SELECT count(*) FROM outbox WHERE sent_at IS NULL AND queue NOT LIKE 'recon-%'")
      .pluck()
      .get(),
    0,
  );

  server.child.kill('SIGTERM');
  assert.equal((await server.exited).code, 0);
});

/** Posts `body` in two halves with SIGTERM between them; the server's answer and how it exited. */
async function postAcrossSigterm(t: TestContext, body: string) {
  const server = await startServer({ DATA_DIR: tempDir(t) });
  t.after(() => server.child.kill('SIGKILL'));
  const half = Math.floor(body.length / 2);

  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(`${server.url}/api/bank/webhook`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'x-api-password': DEMO_PASSWORD,
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.write(body.slice(0, half));
    // The request is in flight (headers and half the body sent) when the signal arrives.
    setTimeout(() => {
      server.child.kill('SIGTERM');
      setTimeout(() => req.end(body.slice(half)), 300);
    }, 300);
  });
  return { ...(await response), finished: await server.exited };
}

test('SIGTERM lets an in-flight batch finish and commit, then exits 0', async (t) => {
  const { status, text, finished } = await postAcrossSigterm(
    t,
    JSON.stringify({ transactions: [bankRecord()] }),
  );
  assert.equal(status, 200, text);
  assert.equal((JSON.parse(text) as { summary: { accepted: number } }).summary.accepted, 1);
  assert.equal(finished.code, 0);
  assert.match(finished.stderr, /SIGTERM received/);
});

test('SIGTERM lets an in-flight batch of 1,000 records, prepared on a worker thread, commit, then exits 0', async (t) => {
  const transactions = Array.from({ length: 1000 }, () => bankRecord());
  const { status, text, finished } = await postAcrossSigterm(t, JSON.stringify({ transactions }));
  assert.equal(status, 200, text);
  assert.equal((JSON.parse(text) as { summary: { accepted: number } }).summary.accepted, 1000);
  assert.equal(finished.code, 0, 'the worker thread does not keep the stopping server alive');
  assert.match(finished.stderr, /SIGTERM received/);
});

test('a server started with per-process node flags prepares large batches and renders QR codes on its worker threads', async (t) => {
  // Node refuses to start a worker thread given --max-old-space-size or --stack-size; they used to be passed on.
  const base = 'https://pay.example.my';
  const server = await startServer({ DATA_DIR: tempDir(t), WEBHOOK_THREADS: '1', PUBLIC_BASE_URL: base }, [
    '--max-old-space-size=1024',
    '--stack-size=984',
  ]);
  t.after(() => server.child.kill('SIGKILL'));
  const transactions = Array.from({ length: 1000 }, () => bankRecord());
  const posted = await fetch(`${server.url}/api/bank/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD },
    body: JSON.stringify({ transactions }),
  });
  const text = await posted.text();
  assert.equal(posted.status, 200, text);
  assert.equal((JSON.parse(text) as { summary: { accepted: number } }).summary.accepted, 1000);
  const admin = { authorization: `Basic ${Buffer.from(`admin:${DEMO_ADMIN_PASSWORD}`).toString('base64')}` };
  const prepared = await scrape(server.url, admin);
  assert.equal(sample(prepared, 'amil_webhook_bodies_prepared_total', { thread: 'worker' }), 1);
  const qr = await fetch(
    `${server.url}/qr2/?q=${encodeURIComponent(`${base}/pay/LZS/zakat-fitrah/F1/28.00`)}`,
  );
  assert.equal(qr.status, 200, await qr.clone().text());
  assert.equal(qr.headers.get('content-type'), 'image/png');
});

test('a bad configuration lists every problem and exits 1', async (t) => {
  const dataDir = tempDir(t);
  await assert.rejects(
    startServer({ DATA_DIR: dataDir, PORT: 'eighty', LOG_LEVEL: 'loud', WEBHOOK_MAX_RECORDS: '0' }),
    (err: Error) => {
      assert.match(err.message, /server.ts exited with 1/);
      assert.match(err.message, /PORT must be an integer/);
      assert.match(err.message, /LOG_LEVEL must be one of/);
      assert.match(err.message, /WEBHOOK_MAX_RECORDS must be an integer from 1/);
      return true;
    },
  );
});

test('a second server on a busy port says which port is in use and which variable to set, without a stack trace', async (t) => {
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  t.after(() => busy.close());
  const { port } = busy.address() as AddressInfo;
  for (const [variable, env] of [
    ['PORT', { PORT: String(port) }],
    ['REPORTS_PORT', { PORT: '0', REPORTS_PORT: String(port) }],
  ] as const) {
    await assert.rejects(startServer({ DATA_DIR: tempDir(t), ...env }), (err: Error) => {
      assert.match(err.message, /server.ts exited with 1/);
      assert.match(err.message, new RegExp(`port ${port} is in use; set ${variable}`));
      assert.doesNotMatch(err.message, /EADDRINUSE|\n\s+at /, 'no stack trace');
      return true;
    });
  }
});

test('production refuses demo data, and refuses to start while the demo password is valid', async (t) => {
  const dataDir = tempDir(t);
  await assert.rejects(
    startServer({ DATA_DIR: dataDir, NODE_ENV: 'production', SEED_DEMO: 'true' }),
    /SEED_DEMO must not be true/,
  );

  // A store once run in embedded mode still holds the demo password.
  const dev = await startServer({ DATA_DIR: dataDir });
  dev.child.kill('SIGTERM');
  await dev.exited;
  const production = {
    DATA_DIR: dataDir,
    NODE_ENV: 'production',
    REPORT_TOKEN_SECRET: 'a-real-secret-of-at-least-32-characters',
    PAY_LINK_SECRET: 'another-real-secret-of-32-characters-or-more',
    PUBLIC_BASE_URL: 'https://pay.amil.example.my',
    PUBLIC_REPORTS_URL: 'https://api.amil.example.my',
  };
  await assert.rejects(
    startServer(production),
    /still accepts the demo password.*revoke-password demo-bank --label demo/s,
  );
  assert.equal(
    (await runCli(['partner', 'revoke-password', 'demo-bank', '--label', 'demo'], { DATA_DIR: dataDir }))
      .code,
    0,
  );
  await assert.rejects(
    startServer(production),
    /LZS still has the demo API key.*amil agency rotate-key LZS/s,
  );
  await assert.rejects(
    startServer({ DATA_DIR: dataDir, NODE_ENV: 'production' }),
    /REPORT_TOKEN_SECRET is required/,
  );
});

test('a production server without an acquirer says so at start, and no sandbox bank or page exists', async (t) => {
  const dataDir = tempDir(t);
  const server = await startServer({
    DATA_DIR: dataDir,
    NODE_ENV: 'production',
    REPORT_TOKEN_SECRET: 'a-real-secret-of-at-least-32-characters',
    PAY_LINK_SECRET: 'another-real-secret-of-32-characters-or-more',
    PUBLIC_BASE_URL: 'https://pay.amil.example.my',
    PUBLIC_REPORTS_URL: 'https://api.amil.example.my',
  });
  t.after(() => server.child.kill('SIGKILL'));
  // The line follows the 'listening' one; under load it may take a moment to be written.
  for (let waited = 0; !/payments are not configured/.test(server.output()) && waited < 5000; waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.match(server.output(), /payments are not configured \(ACQUIRER=none\)/);
  const url = /"url":"([^"]+)"/.exec(server.output())?.[1] ?? '';
  const checkout = await fetch(`${url}/v2/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'agency=LZS&refNo=R1&amount=10.00&email=a%40example.my&returnUrl=https%3A%2F%2Fshop.example.my%2Fr',
  });
  assert.equal(checkout.status, 503);
  assert.equal((await fetch(`${url}/sandbox/sbx_x`, { method: 'POST', body: 'outcome=00' })).status, 404);
  assert.equal((await fetch(`${url}/api/version`)).status, 200);

  // A second machine whose environment left out NODE_ENV (decision 293): it would seed the demo password and
  // take sandbox payments into production's store, so it does not start on it.
  await assert.rejects(
    startServer({ DATA_DIR: dataDir }),
    /this store is production's.*NODE_ENV=production/s,
  );
  const webhook = await fetch(`${url}/api/bank/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD },
    body: JSON.stringify({ transactions: [bankRecord()] }),
  });
  assert.equal(webhook.status, 401, 'the demo password was never seeded');
});

test('a host given a port of its own is served there and no longer on the shared port', async (t) => {
  const server = await startServer({ DATA_DIR: tempDir(t), PAY_PORT: '0' });
  t.after(() => server.child.kill('SIGKILL'));
  // startServer returns at the first "listening" line; the second port's line may follow a moment later.
  const listening = () =>
    [...server.output().matchAll(/"hosts":"([^"]+)","url":"([^"]+)"/g)].map((m) => [m[1], m[2]]);
  for (const deadline = Date.now() + 10_000; listening().length < 2 && Date.now() < deadline;)
    await new Promise((r) => setTimeout(r, 50));
  const urls = listening();
  const pay = urls.find(([hosts]) => hosts === 'pay')?.[1];
  const shared = urls.find(([hosts]) => hosts === 'base+reports')?.[1];
  assert.ok(pay && shared, JSON.stringify(urls));
  const post = (base: string) =>
    fetch(`${base}/api/bank/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD },
      body: JSON.stringify({ transactions: [bankRecord()] }),
    });
  assert.equal((await post(pay)).status, 200);
  assert.equal((await post(shared)).status, 404);
  assert.equal((await fetch(`${shared}/health`)).status, 200, 'every host answers /health');
  server.child.kill('SIGTERM');
  assert.equal((await server.exited).code, 0);
});

/** `npm start` in Redis mode on `redisUrl`, killed after the test if it is still running. */
async function startRedisModeServer(t: TestContext, redisUrl: string, queuePrefix = 'amil') {
  const server = await startServer({ DATA_DIR: tempDir(t), REDIS_URL: redisUrl, QUEUE_PREFIX: queuePrefix });
  onCleanup(t, () => server.child.kill('SIGKILL'));
  return server;
}

test('npm start in Redis mode is ready only while Redis answers, and its /metrics reads the queues from Redis', async (t) => {
  const redis = await startRedis(t);
  const server = await startRedisModeServer(t, redis.url, redis.prefix);
  const admin = { authorization: `Basic ${Buffer.from(`admin:${DEMO_ADMIN_PASSWORD}`).toString('base64')}` };
  const readyStatus = async () => (await fetch(`${server.url}/health/ready`)).status;
  // Not ready until its Redis connection is up, as a load balancer polling it would see.
  assert.equal(await readyWithin(server.url, 10_000), 200);
  const posted = await fetch(`${server.url}/api/bank/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD },
    body: JSON.stringify({ transactions: [bankRecord()] }),
  });
  assert.equal(posted.status, 200);
  // No worker runs: the job waits in the outbox, and Redis's normalise queue is empty but reported.
  let text = await scrape(server.url, admin);
  assert.equal(sample(text, 'amil_ready', { dependency: 'redis' }), 1);
  assert.equal(sample(text, 'amil_outbox_waiting', { queue: 'normalise' }), 1);
  assert.equal(sample(text, 'amil_queue_jobs', { queue: 'normalise', state: 'waiting' }), 0);
  assert.equal(sample(text, 'amil_versions_unledgered'), 1);

  await redis.stop();
  assert.equal(await readyStatus(), 503);
  assert.equal((await fetch(`${server.url}/health/live`)).status, 200);
  // A batch is still stored while Redis is down: the wake it announces to the workers is dropped, never
  // waited for (decision 220), and the job waits in the outbox.
  const whileDown = await fetch(`${server.url}/api/bank/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD },
    body: JSON.stringify({ transactions: [bankRecord()] }),
  });
  assert.equal(whileDown.status, 200);
  text = await scrape(server.url, admin);
  assert.equal(sample(text, 'amil_ready', { dependency: 'redis' }), 0);
  assert.equal(sample(text, 'amil_outbox_waiting', { queue: 'normalise' }), 2);

  await redis.start();
  assert.equal(await readyWithin(server.url, 10_000), 200, 'ready again once Redis is back');
});

test('in Redis mode, a web process asked to stop while Redis is down stops all the same', async (t) => {
  const redis = await startRedis(t);
  const server = await startRedisModeServer(t, redis.url, redis.prefix);
  // Ready first (its connection to Redis made), then the outage.
  assert.equal(await readyWithin(server.url, 10_000), 200);
  await redis.stop();
  await new Promise((r) => setTimeout(r, 1000));
  await stopGracefully(server);
});

test('in Redis mode, a web process whose Redis never answered stops all the same', async (t) => {
  const closed = `redis://127.0.0.1:${await freePort()}`;
  const server = await startRedisModeServer(t, closed);
  assert.equal((await fetch(`${server.url}/health/ready`)).status, 503, 'not ready without Redis');
  await stopGracefully(server);
});
