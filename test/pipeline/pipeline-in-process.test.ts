import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { REPO_ROOT, bankRecord, fitrahRecord, startApp, type TestApp } from '../helpers.ts';
import { createInProcessRelay } from '../../pipeline/relay.ts';
import { normaliseJob } from '../../pipeline/jobs/normalise.ts';
import { ledgerJob } from '../../pipeline/jobs/ledger.ts';
import type { BankWebhookResponse } from '../../schemas/index.ts';
import { fixedClock } from '../../core/clock.ts';

// No backoff, so drain() sees every retry at once.
const FAST = { pollMs: 20, maxAttempts: 3, backoffMs: 0 };
const DAY_DIR = path.join(REPO_ROOT, 'fixtures/days/2026-11-20');

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

test('the fixture day flows from the webhook to per-agency ledgers, BANK tests to the test sink', async (t) => {
  // Posted on the day itself, as the bank would.
  const app = await startApp(t, {}, { clock: fixedClock('2026-11-20T21:00:00+08:00') });
  const relay = createInProcessRelay(app.deps, FAST);
  await postDay(app);
  await relay.drain();
  const { pipeline } = app.deps.store;
  const lzs = await pipeline.ledger('LZS', '2026-11-20');
  const ppz = await pipeline.ledger('PPZ', '2026-11-20');
  const test = await pipeline.ledger('#test');
  // 16 LZS postings and 12 PPZ postings; the two pending ones that changed have a second entry each.
  assert.equal(new Set(lzs.map((e) => e.postingId)).size, 16);
  assert.equal(new Set(ppz.map((e) => e.postingId)).size, 12);
  assert.equal(lzs.length + ppz.length, 28 + 2);
  assert.equal(test.length, 2);
  assert.ok(
    [...lzs, ...ppz].every((e) => !e.isAdjustment),
    'same-day changes are not adjustments',
  );
  const flagged = ppz.filter((e) => e.exceptions.includes('FITRAH_MISMATCH'));
  assert.equal(flagged.length, 1, 'the fixture fitrah mismatch is flagged, not dropped');
  assert.deepEqual(await app.deps.store.outbox.failed(), []);
});

test('the same jobs processed twice leave the same ledger', async (t) => {
  const app = await startApp(t);
  const relay = createInProcessRelay(app.deps, FAST);
  const [first] = await postDay(app);
  await relay.drain();
  const before = await app.deps.store.pipeline.ledger('LZS');
  const batchId = first?.batch_id ?? '';
  await normaliseJob.process({ batchId }, app.deps);
  await ledgerJob.process({ batchId, sink: 'LZS' }, app.deps);
  await ledgerJob.process({ batchId, sink: 'LZS' }, app.deps);
  assert.deepEqual(await app.deps.store.pipeline.ledger('LZS'), before);
});

test('a relay killed between commit and hand-over: the posting still reaches the ledger exactly once', async (t) => {
  const app = await startApp(t);
  const record = bankRecord();
  assert.equal((await app.postBatch({ transactions: [record] })).status, 200);
  // No relay ran: the work waits in the outbox, committed with the posting.
  assert.deepEqual(
    (await app.deps.store.outbox.stats()).map((s) => [s.queue, s.waiting]),
    [['normalise', 1]],
  );
  // A job that ran but whose "sent" mark was lost (crash) runs again on restart, and converges.
  const [row] = await app.deps.store.outbox.pending(10, new Date());
  await normaliseJob.process(JSON.parse(row?.payload ?? '{}') as { batchId: string }, app.deps);
  const relay = createInProcessRelay(app.deps, FAST);
  await relay.drain();
  const ledger = await app.deps.store.pipeline.ledger('LZS');
  assert.equal(ledger.length, 1);
  assert.equal(ledger[0]?.amountSen, 15050);
});

test('a pending that succeeds on a later day is an adjustment of its own day', async (t) => {
  const clock = fixedClock('2026-11-19T22:05:00+08:00');
  const app = await startApp(t, {}, { clock });
  const relay = createInProcessRelay(app.deps, FAST);
  const pending = fitrahRecord({ status: 'pending', time: '2026-11-19T22:00:00+08:00' });
  await app.postBatch({ transactions: [pending] });
  await relay.drain();
  // The update arrives the next morning.
  clock.set('2026-11-20T08:05:00+08:00');
  await app.postBatch({
    transactions: [{ ...pending, status: 'success', time: '2026-11-20T08:00:00+08:00' }],
  });
  await relay.drain();
  const entries = await app.deps.store.pipeline.ledger('LZS', '2026-11-19');
  assert.deepEqual(
    entries.map((e) => [e.version, e.status, e.isAdjustment]),
    [
      [1, 'pending', false],
      [2, 'success', true],
    ],
  );
});

test('a ledger failing for LZS does not hold back PPZ, and LZS catches up once fixed and retried', async (t) => {
  const app = await startApp(t);
  const db = new Database(app.deps.store.file);
  t.after(() => db.close());
  db.exec(`CREATE TRIGGER lzs_down BEFORE INSERT ON ledger_entries WHEN NEW.sink = 'LZS'
           BEGIN SELECT RAISE(ABORT, 'LZS ledger down'); END`);
  const relay = createInProcessRelay(app.deps, FAST);
  await app.postBatch({
    transactions: [bankRecord({ agency: 'BANKLZS' }), bankRecord({ agency: 'BANKPPZ' })],
  });
  await relay.drain();
  assert.equal((await app.deps.store.pipeline.ledger('PPZ')).length, 1);
  assert.equal((await app.deps.store.pipeline.ledger('LZS')).length, 0);
  const failed = await app.deps.store.outbox.failed();
  assert.deepEqual(
    failed.map((f) => [f.queue, f.attempts]),
    [['ledger-LZS', 3]],
  );
  assert.match(failed[0]?.lastError ?? '', /LZS ledger down/);

  db.exec('DROP TRIGGER lzs_down');
  assert.equal(await app.deps.store.outbox.retryFailed('ledger-LZS'), 1);
  await relay.drain();
  assert.equal((await app.deps.store.pipeline.ledger('LZS')).length, 1);
});
