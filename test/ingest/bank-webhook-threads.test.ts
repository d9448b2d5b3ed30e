import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_ADMIN_PASSWORD } from '../../core/config.ts';
import type { BankWebhookResponse } from '../../schemas/index.ts';
import { bankRecord, startApp, type TestApp } from '../helpers.ts';
import { scrape, sample } from '../support/metrics.ts';
import { prepareBatch } from '../../ingest/bank-webhook/prepare-batch.ts';
import { createBatchPreparer } from '../../ingest/bank-webhook/preparer.ts';

const ADMIN = { authorization: `Basic ${Buffer.from(`admin:${DEMO_ADMIN_PASSWORD}`).toString('base64')}` };

const preparedOn = async (app: TestApp, thread: 'worker' | 'request') =>
  sample(await scrape(app.url, ADMIN), 'amil_webhook_bodies_prepared_total', { thread }) ?? 0;

/** A batch of `size` records, the same ordernos on both apps. */
function batchOf(size: number, tag: string) {
  return Array.from({ length: size }, (_, i) =>
    bankRecord({ orderno: `${tag}-${i}`, ...(i % 3 === 0 && { status: 'pending' as const }) }),
  );
}

test('a batch of 1,000 records is prepared on a worker thread and judged as on the request thread', async (t) => {
  const threaded = await startApp(t, { WEBHOOK_THREADS: '1' });
  const inline = await startApp(t, { WEBHOOK_THREADS: '0' });
  const batch = batchOf(1000, `THR${process.pid}`);
  // The same orderno again, changed (an update), and resent (a duplicate), inside one large batch.
  batch.push(
    { ...(batch[0] as (typeof batch)[number]), status: 'success' },
    batch[1] as (typeof batch)[number],
  );

  const answers: BankWebhookResponse[] = [];
  for (const app of [threaded, inline]) {
    const first = await app.postBatch({ transactions: batch });
    assert.equal(first.status, 200, await first.clone().text());
    answers.push((await first.json()) as BankWebhookResponse);
  }
  assert.equal(await preparedOn(threaded, 'worker'), 1, 'the large body went to a worker thread');
  assert.equal(await preparedOn(threaded, 'request'), 0);
  assert.equal(await preparedOn(inline, 'request'), 1, 'WEBHOOK_THREADS=0 keeps it on the request thread');
  const [onWorker, onRequest] = answers.map((a) => ({ summary: a.summary, results: a.results }));
  assert.deepEqual(onWorker, onRequest);
  assert.deepEqual(onWorker?.summary, {
    records: 1002,
    accepted: 1000,
    duplicate: 1,
    updated: 1,
    conflict: 0,
  });
  const stored = await threaded.deps.store.bankPostings.get('demo-bank', batch[0]?.orderno ?? '');
  assert.equal(stored?.amountSen, 15050, 'amounts prepared off-thread are integer sen');
  assert.equal(stored?.timeUtc, '2026-11-20T01:15:23.000Z');
});

test('a large batch refused on a worker thread gets the same problem as on the request thread', async (t) => {
  const threaded = await startApp(t, { WEBHOOK_THREADS: '1' });
  const inline = await startApp(t, { WEBHOOK_THREADS: '0' });
  const batch: unknown[] = batchOf(1000, `BAD${process.pid}`);
  batch[500] = { ...(batch[500] as object), amount: -1 };
  const problems = [];
  for (const app of [threaded, inline]) {
    const res = await app.postBatch({ transactions: batch });
    assert.equal(res.status, 422);
    assert.equal(res.headers.get('content-type'), 'application/problem+json');
    const { request_id: _, ...problem } = (await res.json()) as Record<string, unknown>;
    problems.push(problem);
  }
  assert.deepEqual(problems[0], problems[1]);
  assert.equal(await preparedOn(threaded, 'worker'), 0, 'a refused body is not counted as prepared');
  assert.equal((await threaded.deps.store.bankPostings.counts()).postings, 0);

  const notJson = await threaded.postBatch(`{"transactions":[${'{},'.repeat(30_000)}`);
  assert.equal(notJson.status, 400, 'a large body that is not JSON is refused from the worker thread too');
});

test('a small batch stays on the request thread', async (t) => {
  const app = await startApp(t, { WEBHOOK_THREADS: '1' });
  assert.equal((await app.postBatch({ transactions: [bankRecord()] })).status, 200);
  assert.equal(await preparedOn(app, 'request'), 1);
  assert.equal(await preparedOn(app, 'worker'), 0);
});

test('a body prepared on a worker thread comes back as the same records, SHA-256 and gzip as on the request thread', async (t) => {
  const app = await startApp(t, { WEBHOOK_THREADS: '1' });
  const rules = { validate: app.deps.validators.bankWebhookRequest, webhook: app.deps.config.webhook };
  // Every field varied: a pending record, a live-test route (no agency), an offset to normalise, a fraction.
  const batch = batchOf(300, `COL${process.pid}`);
  batch[1] = bankRecord({
    orderno: `COL${process.pid}-test`,
    agency: 'BANK',
    time: '2026-11-20T09:15:23.5+0800',
  });
  const body = Buffer.from(JSON.stringify({ transactions: batch }));
  const receivedAt = new Date();

  const { thread, ...onWorker } = await createBatchPreparer(rules, 1).prepare(body, receivedAt);
  assert.equal(thread, 'worker');
  const onRequest = prepareBatch(body, receivedAt, rules);
  assert.deepEqual(onWorker.records, onRequest.records);
  assert.equal(onWorker.bodySha256, onRequest.bodySha256);
  assert.ok(onWorker.bodyGzip && Buffer.isBuffer(onWorker.bodyGzip), 'the gzip comes back as a Buffer');
  assert.ok(onWorker.bodyGzip.equals(onRequest.bodyGzip ?? Buffer.alloc(0)));
});
