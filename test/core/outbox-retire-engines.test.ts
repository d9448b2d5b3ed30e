/**
 * The callbacks' outbox rows after decision 264: a callback is leased from its own row, so an outbox row of
 * the callbacks queue is an earlier release's (written during a rolling upgrade). A relay never hands one
 * to Redis, and the lease loop retires them (waiting, failed, or handed to Redis long ago and never done);
 * the other queues' rows are untouched.
 */
import assert from 'node:assert/strict';
import { onBothEngines } from '../support/engines.ts';

const NOW = new Date('2026-11-20T02:00:00.000Z');
const UNTIL = new Date('2026-11-20T02:00:40.000Z');
const AFTER = new Date('2026-11-20T02:00:41.000Z');

onBothEngines(
  "a relay handing over leaves the callbacks' rows alone, and retiring them completes them, failed ones too",
  async (_t, store) => {
    await store.outbox.enqueue('callbacks', 'callback:1:0', { callbackId: 1 }, NOW);
    await store.outbox.enqueue('callbacks', 'callback:2:0', { callbackId: 2 }, NOW);
    await store.outbox.enqueue('normalise', 'normalise:bat_1', { batchId: 'bat_1' }, NOW);
    await store.outbox.enqueue('receipts', 'receipt.AM1', { orderNo: 'AM1' }, NOW);
    const handed: string[] = [];
    const n = await store.outbox.handOver(
      500,
      NOW,
      (rows) => {
        handed.push(...rows.map((r) => r.jobId));
        return Promise.resolve();
      },
      'callbacks',
    );
    assert.equal(n, 2);
    assert.deepEqual(handed.sort(), ['normalise:bat_1', 'receipt.AM1']);

    // One of them failed (an earlier release's worker gave up on it), one waiting; a receipt failed too.
    const rows = await store.outbox.pending(10, NOW);
    const second = rows.find((r) => r.jobId === 'callback:2:0')!;
    await store.outbox.markAttemptFailed(second.id, 'past its horizon', NOW, UNTIL, true);
    await store.outbox.markFailedForGood('receipt.AM1', 'bad payload', NOW);
    // One handed to Redis by a release before decision 218, never done.
    await store.outbox.enqueue('callbacks', 'callback:3:0', { callbackId: 3 }, NOW);
    const third = (await store.outbox.pending(10, NOW)).find((r) => r.jobId === 'callback:3:0')!;
    await store.outbox.markSentMany([third.id], NOW);
    const unfinishedCallbacks = async () =>
      (await store.outbox.unfinished(AFTER, 10)).filter((r) => r.queue === 'callbacks');
    assert.equal((await unfinishedCallbacks()).length, 1);
    assert.equal(await store.outbox.retireQueue('callbacks', AFTER), 3);
    assert.deepEqual(await unfinishedCallbacks(), [], 'nothing left for the reconciler');
    assert.deepEqual(await store.outbox.pending(10, AFTER), [], 'no callback row waits');
    const failed = await store.outbox.failed();
    assert.deepEqual(
      failed.map((f) => f.jobId),
      ['receipt.AM1'],
      "only the other queue's failure stays",
    );
    const stats = new Map((await store.outbox.stats()).map((s) => [s.queue, s]));
    assert.equal(stats.get('callbacks')?.waiting ?? 0, 0);
    assert.equal(stats.get('callbacks')?.failed ?? 0, 0);
    assert.equal(await store.outbox.retireQueue('callbacks', AFTER), 0, 'nothing left to retire');
  },
);

onBothEngines('a re-drive of one queue leaves the failed rows of the others alone', async (_t, store) => {
  await store.outbox.enqueue('receipts', 'receipt.AM1', { orderNo: 'AM1' }, NOW);
  await store.outbox.enqueue('normalise', 'normalise:bat_1', { batchId: 'bat_1' }, NOW);
  for (const row of await store.outbox.pending(10, NOW))
    await store.outbox.markAttemptFailed(row.id, 'past its horizon', NOW, UNTIL, true);
  assert.equal(await store.outbox.redriveDue(AFTER, 'receipts'), 1);
  const [stillFailed, ...more] = await store.outbox.failed();
  assert.equal(more.length, 0);
  assert.equal(stillFailed?.queue, 'normalise');
  assert.equal(await store.outbox.redriveDue(AFTER), 1, 'without a queue: every queue');
});
