import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, bankRecord, fitrahRecord, onCleanup, startApp, type TestApp } from '../helpers.ts';
import { startRedis, type TestRedis } from '../support/redis.ts';
import { appDb } from '../support/app-db.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { createBullRuntime } from '../../pipeline/bullmq/runtime.ts';
import { normaliseJob } from '../../pipeline/jobs/normalise.ts';
import { ledgerJob } from '../../pipeline/jobs/ledger.ts';
import { PermanentJobError } from '../../pipeline/jobs/types.ts';
import type { PipelineRuntime } from '../../pipeline/runtime.ts';
import type { BankWebhookResponse } from '../../schemas/index.ts';
import { fixedClock, type Clock } from '../../core/clock.ts';
import { RECEIPT_QUEUE } from '../../core/queues.ts';

const DAY_DIR = path.join(REPO_ROOT, 'fixtures/days/2026-11-20');

interface Pipeline {
  app: TestApp;
  runtime: PipelineRuntime;
  redis?: TestRedis;
}

/** The app with a pipeline runtime of the given kind; both share every test below. */
type Backend = (t: TestContext, clock?: Clock) => Promise<Pipeline>;

const BACKENDS: Record<string, Backend> = {
  'in-process': async (t, clock) => {
    const app = await startApp(t, {}, clock ? { clock } : {});
    // No backoff, so drain() sees every retry at once.
    return { app, runtime: createInProcessRuntime(app.deps, { pollMs: 20, maxAttempts: 3, backoffMs: 0 }) };
  },
  bullmq: async (t, clock) => {
    const redis = await startRedis(t);
    const app = await startApp(
      t,
      { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix },
      clock ? { clock } : {},
    );
    const runtime = createBullRuntime(app.deps, {
      pollMs: 20,
      jobOptions: { attempts: 3, backoff: { type: 'fixed', delay: 5 }, removeOnFail: false },
      withWorkers: true,
    });
    runtime.start();
    onCleanup(t, () => runtime.stop());
    return { app, runtime, redis };
  },
};

async function postDay(app: TestApp): Promise<BankWebhookResponse[]> {
  const files = readdirSync(DAY_DIR)
    .filter((f) => /^\d\d-.+\.json$/.test(f))
    .sort();
  const out: BankWebhookResponse[] = [];
  for (const file of files) {
    const response = await app.postBatch(readFileSync(path.join(DAY_DIR, file)));
    assert.equal(response.status, 200);
    out.push((await response.json()) as BankWebhookResponse);
  }
  return out;
}

for (const [kind, backend] of Object.entries(BACKENDS)) {
  test(`[${kind}] the fixture day flows to per-agency ledgers, BANK tests to the test sink`, async (t) => {
    // Posted on the day itself, as the bank would: after its last record (23:59:30), as the record-time
    // window requires (a time ahead of its receipt is refused).
    const { app, runtime } = await backend(t, fixedClock('2026-11-20T23:59:50+08:00'));
    await postDay(app);
    await runtime.drain();
    const { ledger } = app.deps.store;
    const lzs = await ledger.entries('LZS', '2026-11-20');
    const ppz = await ledger.entries('PPZ', '2026-11-20');
    // 16 LZS and 12 PPZ postings; the two pending ones that changed have a second entry each.
    assert.equal(new Set(lzs.map((e) => e.postingId)).size, 16);
    assert.equal(new Set(ppz.map((e) => e.postingId)).size, 12);
    assert.equal(lzs.length + ppz.length, 28 + 2);
    assert.equal((await ledger.entries('#test')).length, 2);
    assert.ok(
      [...lzs, ...ppz].every((e) => !e.isAdjustment),
      'same-day changes are not adjustments',
    );
    assert.equal(
      ppz.filter((e) => e.exceptions.includes('FITRAH_MISMATCH')).length,
      1,
      'flagged, not dropped',
    );
    assert.deepEqual(await runtime.failed(), []);
  });

  test(`[${kind}] a normalise job for an unknown batch fails for good rather than succeeding silently`, async (t) => {
    const { app } = await backend(t);
    await assert.rejects(normaliseJob.process({ batchId: 'bat_nope' }, app.deps), PermanentJobError);
  });

  test(`[${kind}] a job whose payload fails its schema fails for good at once, saying which field is wrong`, async (t) => {
    const { app, runtime } = await backend(t);
    await app.deps.store.outbox.enqueue(RECEIPT_QUEUE, 'receipt.bad', { orderNo: 9 }, new Date());
    await runtime.drain();
    const [failed, ...more] = await runtime.failed();
    assert.equal(more.length, 0);
    assert.equal(failed?.jobId, 'receipt.bad');
    assert.equal(failed.attempts, 1, 'not retried: it would fail the same way');
    assert.match(failed.error, /^receipt payload: \/orderNo must be string$/);
    const [row] = await app.deps.store.outbox.failed();
    assert.equal(row?.jobId, 'receipt.bad');
    assert.match(row.lastError ?? '', /\/orderNo must be string/);
  });

  test(`[${kind}] the same jobs processed twice leave the same ledger`, async (t) => {
    const { app, runtime } = await backend(t);
    const [first] = await postDay(app);
    await runtime.drain();
    const before = await app.deps.store.ledger.entries('LZS');
    const batchId = first?.batch_id ?? '';
    await normaliseJob.process({ batchId }, app.deps);
    await ledgerJob.process({ batchId, sink: 'LZS' }, app.deps);
    await ledgerJob.process({ batchId, sink: 'LZS' }, app.deps);
    assert.deepEqual(await app.deps.store.ledger.entries('LZS'), before);
  });

  test(`[${kind}] a relay killed between commit and hand-over: the posting reaches the ledger exactly once`, async (t) => {
    const { app, runtime } = await backend(t);
    await runtime.stop(); // nothing runs: the work waits in the outbox, committed with the posting
    assert.equal((await app.postBatch({ transactions: [bankRecord()] })).status, 200);
    const [row] = await app.deps.store.outbox.pending(10, new Date());
    assert.equal(row?.queue, 'normalise');
    // The job had run but its "sent" mark was lost in the crash: it runs again on restart and converges.
    await normaliseJob.process(JSON.parse(row.payload) as { batchId: string }, app.deps);
    const restarted = kind === 'bullmq' ? createBullRuntime(app.deps) : createInProcessRuntime(app.deps);
    restarted.start();
    onCleanup(t, () => restarted.stop());
    await restarted.drain();
    const ledger = await app.deps.store.ledger.entries('LZS');
    assert.deepEqual(
      ledger.map((e) => e.amountSen),
      [15050],
    );

    // A crash after the hand-over but before the "sent" mark: every row goes again, and nothing doubles.
    const db = appDb(t, app);
    await db.run('UPDATE outbox SET sent_at = NULL');
    await restarted.drain();
    assert.deepEqual(await app.deps.store.ledger.entries('LZS'), ledger);
    assert.deepEqual(await db.rows('SELECT count(*) AS n FROM outbox WHERE sent_at IS NULL'), [{ n: 0 }]);
  });

  test(`[${kind}] a pending that succeeds on a later day is an adjustment of its own day`, async (t) => {
    const clock = fixedClock('2026-11-19T22:05:00+08:00');
    const { app, runtime } = await backend(t, clock);
    const pending = fitrahRecord({ status: 'pending', time: '2026-11-19T22:00:00+08:00' });
    await app.postBatch({ transactions: [pending] });
    await runtime.drain();
    clock.set('2026-11-20T08:05:00+08:00'); // the update arrives the next morning
    await app.postBatch({
      transactions: [{ ...pending, status: 'success', time: '2026-11-20T08:00:00+08:00' }],
    });
    await runtime.drain();
    // A posting of the 19th that only arrives on the 20th is an adjustment of the 19th as well.
    const late = bankRecord({ time: '2026-11-19T23:59:00+08:00' });
    await app.postBatch({ transactions: [late] });
    await runtime.drain();
    const entries = await app.deps.store.ledger.entries('LZS', '2026-11-19');
    assert.deepEqual(
      entries.map((e) => [e.version, e.status, e.isAdjustment]),
      [
        [1, 'pending', false],
        [2, 'success', true],
        [1, 'success', true],
      ],
    );
  });

  test(`[${kind}] a ledger failing for LZS does not hold back PPZ; once fixed and retried, LZS catches up`, async (t) => {
    const { app, runtime } = await backend(t);
    const repair = await appDb(t, app).failInserts('ledger_entries', 'sink', 'LZS', 'LZS ledger down');
    await app.postBatch({
      transactions: [bankRecord({ agency: 'BANKLZS' }), bankRecord({ agency: 'BANKPPZ' })],
    });
    await runtime.drain();
    assert.equal((await app.deps.store.ledger.entries('PPZ')).length, 1);
    assert.equal((await app.deps.store.ledger.entries('LZS')).length, 0);
    const failed = await runtime.failed();
    assert.deepEqual(
      failed.map((f) => [f.queue, f.attempts]),
      [['ledger-LZS', 3]],
    );
    assert.match(failed[0]?.error ?? '', /LZS ledger down/);

    await repair();
    assert.equal(await runtime.retryFailed('ledger-LZS'), 1);
    await runtime.drain();
    assert.equal((await app.deps.store.ledger.entries('LZS')).length, 1);
    assert.deepEqual(await runtime.failed(), []);
  });
}

test('[bullmq] Redis down: 1,000 postings wait in the outbox, and all reach the ledger once it is back', async (t) => {
  const { app, runtime, redis } = await BACKENDS.bullmq!(t);
  await redis?.stop();
  const records = Array.from({ length: 1000 }, () => bankRecord());
  for (let i = 0; i < records.length; i += 100) {
    const response = await app.postBatch({ transactions: records.slice(i, i + 100) });
    assert.equal(response.status, 200, 'the webhook does not need Redis');
  }
  await new Promise((resolve) => setTimeout(resolve, 200)); // the relay tries, and fails, meanwhile
  assert.equal((await app.deps.store.outbox.pending(100, new Date())).length, 10, 'nothing was lost');
  // Ops are pointed at Redis, not at the store (whose outage the relay names apart).
  assert.match(app.logs(), /cannot reach redis: postings wait in the outbox/);
  assert.doesNotMatch(app.logs(), /cannot read the outbox from the store/);

  await redis?.start();
  // No drain(): the running relay and workers must recover on their own.
  for (
    let waited = 0;
    (await app.deps.store.ledger.entries('LZS')).length < 1000 && waited < 20_000;
    waited += 100
  ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const ledger = await app.deps.store.ledger.entries('LZS');
  assert.equal(ledger.length, 1000);
  assert.equal(new Set(ledger.map((e) => e.postingId)).size, 1000, 'none doubled');
  assert.deepEqual(await runtime.failed(), []);
});
