import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixedClock } from '../../core/clock.ts';
import { DEMO_ADMIN_PASSWORD } from '../../core/config.ts';
import { createOutboxRelay } from '../../pipeline/bullmq/outbox-relay.ts';
import { observePipeline } from '../../pipeline/observe.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { bankRecord, onCleanup, startApp, type TestApp } from '../helpers.ts';
import { startRedis } from '../support/redis.ts';
import { scrape, sample } from '../support/metrics.ts';
import { readiness } from '../bin/processes.ts';

const ADMIN = { authorization: `Basic ${Buffer.from(`admin:${DEMO_ADMIN_PASSWORD}`).toString('base64')}` };

test('GET /metrics asks for the admin password, then serves the Prometheus text format', async (t) => {
  const app = await startApp(t);
  const refused = await fetch(`${app.url}/metrics`);
  assert.equal(refused.status, 401);
  assert.equal(refused.headers.get('content-type'), 'application/problem+json');
  assert.match(refused.headers.get('www-authenticate') ?? '', /^Basic realm="amil admin"/);
  const problem = (await refused.json()) as { type: string; request_id: string };
  assert.equal(problem.type, 'https://docs.amil.my/problems/unauthorized');
  assert.equal(
    problem.request_id,
    refused.headers.get('x-request-id'),
    'the request id of the one error path',
  );
  const wrong = await fetch(`${app.url}/metrics`, {
    headers: { authorization: `Basic ${Buffer.from('admin:guess').toString('base64')}` },
  });
  assert.equal(wrong.status, 401);

  const res = await fetch(`${app.url}/metrics`, { headers: ADMIN });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  assert.match(text, /^# TYPE amil_http_request_duration_seconds histogram$/m);
  assert.equal(sample(text, 'amil_ready', { dependency: 'store' }), 1);
});

test('without an admin password there is no /metrics (404)', async (t) => {
  const app = await startApp(t, { HOST: '0.0.0.0' });
  assert.equal(app.deps.config.adminPassword, undefined);
  assert.equal((await fetch(`${app.url}/metrics`)).status, 404);
});

test('HTTP latency is labelled by the route template, never by the raw path', async (t) => {
  const app = await startApp(t);
  await fetch(`${app.url}/v2/checkout/AM0000000000SECRET`, { headers: { accept: 'application/json' } });
  await fetch(`${app.url}/no/such/page/12345`);
  const text = await scrape(app.url, ADMIN);
  assert.equal(
    sample(text, 'amil_http_request_duration_seconds_count', {
      route: '/v2/checkout/:orderNo',
      method: 'GET',
      status_class: '4xx',
    }),
    1,
  );
  assert.equal(sample(text, 'amil_http_request_duration_seconds_count', { route: 'unmatched' }), 1);
  assert.ok(!text.includes('SECRET') && !text.includes('12345'), 'no raw path in any label');
});

test('webhook outcomes, the outbox backlog and versions not yet ledgered are measured, and clear when the pipeline runs', async (t) => {
  const clock = fixedClock('2026-11-20T02:00:00Z');
  const app = await startApp(t, {}, { clock });
  const record = bankRecord();
  assert.equal((await app.postBatch({ transactions: [record, bankRecord()] })).status, 200);
  assert.equal((await app.postBatch({ transactions: [record] })).status, 200);
  assert.equal((await app.postBatch({ transactions: [] }, { 'x-api-password': 'wrong' })).status, 401);
  assert.equal((await app.postBatch('{"transactions":[{}]}')).status, 422);
  clock.set('2026-11-20T02:01:30Z');

  let text = await scrape(app.url, ADMIN);
  assert.equal(sample(text, 'amil_webhook_batches_total', { status: '200' }), 2);
  assert.equal(sample(text, 'amil_webhook_batches_total', { status: '401' }), 1);
  assert.equal(sample(text, 'amil_webhook_batches_total', { status: '422' }), 1);
  assert.equal(sample(text, 'amil_webhook_records_total', { outcome: 'accepted' }), 2);
  assert.equal(sample(text, 'amil_webhook_records_total', { outcome: 'duplicate' }), 1);
  assert.equal(
    sample(text, 'amil_outbox_waiting', { queue: 'normalise' }),
    1,
    'a batch of nothing new queues no job',
  );
  assert.equal(sample(text, 'amil_outbox_oldest_waiting_age_seconds', { queue: 'normalise' }), 90);
  assert.equal(sample(text, 'amil_versions_unledgered'), 2);
  assert.equal(sample(text, 'amil_versions_unledgered_oldest_age_seconds'), 90);

  await createInProcessRuntime(app.deps).drain();
  text = await scrape(app.url, ADMIN);
  assert.equal(sample(text, 'amil_versions_unledgered'), 0);
  assert.equal(sample(text, 'amil_versions_unledgered_oldest_age_seconds'), 0);
  assert.equal(sample(text, 'amil_outbox_waiting', { queue: 'normalise' }), undefined);
});

test('nightly runs and their failed e-mails are measured per sink', async (t) => {
  const clock = fixedClock('2026-11-21T01:00:00Z');
  const app = await startApp(t, {}, { clock });
  const run = await recordRun(app, 'LZS', '2026-11-20', '2026-11-20T16:05:00.000Z');
  await app.deps.store.reconRuns.recordDelivery({
    runId: run,
    recipients: ['ops@lzs.example.my'],
    attempt: 1,
    at: '2026-11-20T16:06:00.000Z',
    outcome: 'failed',
    messageId: null,
    detail: 'connect ECONNREFUSED',
  });
  const text = await scrape(app.url, ADMIN);
  assert.equal(
    sample(text, 'amil_recon_last_nightly_run_timestamp_seconds', { sink: 'LZS' }),
    Date.parse('2026-11-20T16:05:00Z') / 1000,
  );
  assert.equal(sample(text, 'amil_recon_emails_failed', { sink: 'LZS' }), 1);

  await app.deps.store.reconRuns.recordDelivery({
    runId: run,
    recipients: ['ops@lzs.example.my'],
    attempt: 2,
    at: '2026-11-20T16:08:00.000Z',
    outcome: 'sent',
    messageId: '<1@amil>',
    detail: null,
  });
  assert.equal(sample(await scrape(app.url, ADMIN), 'amil_recon_emails_failed', { sink: 'LZS' }), 0);
});

test('in Redis mode readiness and the queue gauges follow Redis; with Redis stopped ready is 503 and /metrics still answers', async (t) => {
  const redis = await startRedis(t);
  const app = await startApp(t, { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });
  const observed = await observePipeline(app.deps);
  onCleanup(t, () => observed.close());
  assert.equal((await app.postBatch({ transactions: [bankRecord()] })).status, 200);
  // The relay hands the job to Redis; no worker runs, so it waits there.
  const relay = createOutboxRelay(app.deps);
  onCleanup(t, () => relay.stop());
  assert.equal(await relay.handOver(), 1);

  let text = await scrape(app.url, ADMIN);
  assert.equal(sample(text, 'amil_ready', { dependency: 'redis' }), 1);
  assert.equal(sample(text, 'amil_queue_jobs', { queue: 'normalise', state: 'waiting' }), 1);
  assert.equal(sample(text, 'amil_queue_jobs', { queue: 'callbacks', state: 'failed' }), 0);
  assert.equal((await fetch(`${app.url}/health/ready`)).status, 200);

  await redis.stop();
  const ready = await readiness(app.url);
  assert.equal(ready.status, 503);
  assert.deepEqual(ready.failing, ['/checks/redis']);
  assert.equal((await fetch(`${app.url}/health/live`)).status, 200);
  text = await scrape(app.url, ADMIN);
  assert.equal(sample(text, 'amil_ready', { dependency: 'redis' }), 0);
  assert.equal(sample(text, 'amil_ready', { dependency: 'store' }), 1);
  assert.equal(sample(text, 'amil_queue_jobs', { queue: 'normalise', state: 'waiting' }), undefined);
});

/** Records a nightly run of a sink's day as the reconciliation would (only what the gauges read matters). */
async function recordRun(app: TestApp, sink: string, day: string, finishedAt: string): Promise<number> {
  const run = await app.deps.store.reconRuns.record({
    sink,
    businessDate: day,
    trigger: 'nightly',
    asOf: finishedAt,
    startedAt: finishedAt,
    finishedAt,
    fingerprint: 'f',
    file: `${sink}-${day}.xlsx`,
    fileSha256: '0'.repeat(64),
    fileBytes: 1,
    inputCounts: {},
    totals: {},
    changes: null,
    email: false,
  });
  return run.id;
}
