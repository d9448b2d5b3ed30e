/**
 * The outbox lease (decision 218): in Redis mode every worker takes the callbacks' rows straight from the
 * outbox. Workers leasing at once never take the same row, a leased row is held only until its lease ends
 * (a worker that died holding it delays it, never loses it), and the relay leaves the leased queue alone.
 */
import assert from 'node:assert/strict';
import { onBothEngines } from '../support/engines.ts';

const NOW = new Date('2026-11-20T02:00:00.000Z');
const UNTIL = new Date('2026-11-20T02:00:40.000Z');
const AFTER = new Date('2026-11-20T02:00:41.000Z');

onBothEngines(
  'workers leasing one queue at once never take the same row, and a lease holds a row only until it ends',
  async (_t, store) => {
    for (let i = 0; i < 200; i += 1) await store.outbox.enqueue('callbacks', `callback:${i}:0`, { i }, NOW);
    for (let i = 0; i < 50; i += 1) await store.outbox.enqueue('normalise', `normalise:${i}`, { i }, NOW);

    const taken: number[][] = [];
    // Four workers, each taking 16 at a time until nothing is left: their leases overlap in time.
    const worker = async () => {
      for (;;) {
        const rows = await store.outbox.lease('callbacks', 16, NOW, UNTIL);
        if (rows.length === 0) return;
        assert.ok(rows.length <= 16);
        assert.ok(
          rows.every((r) => r.queue === 'callbacks'),
          'only the queue asked for',
        );
        taken.push(rows.map((r) => r.id));
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    const ids = taken.flat();
    assert.equal(ids.length, 200, 'every row leased');
    assert.equal(new Set(ids).size, 200, 'no row leased twice');
    for (const lease of taken)
      assert.deepEqual(
        lease,
        [...lease].sort((a, b) => a - b),
        'oldest first',
      );

    // Held: not pending, not leased again, and not handed to Redis, until the lease ends.
    const pendingNow = await store.outbox.pending(1000, NOW);
    assert.deepEqual(new Set(pendingNow.map((r) => r.queue)), new Set(['normalise']));
    assert.deepEqual(await store.outbox.lease('callbacks', 16, NOW, UNTIL), []);

    // The lease ended (the worker died): the rows are taken again, by anyone.
    const again = await store.outbox.lease('callbacks', 500, AFTER, new Date(AFTER.getTime() + 40_000));
    assert.equal(again.length, 200);
  },
);

onBothEngines(
  'a relay handing over leaves the leased queue to the workers, and a leased row finished is gone for good',
  async (_t, store) => {
    await store.outbox.enqueue('callbacks', 'callback:1:0', { callbackId: 1 }, NOW);
    await store.outbox.enqueue('callbacks', 'callback:2:0', { callbackId: 2 }, NOW);
    await store.outbox.enqueue('normalise', 'normalise:bat_1', { batchId: 'bat_1' }, NOW);
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
    assert.equal(n, 1);
    assert.deepEqual(handed, ['normalise:bat_1']);

    const [first, second] = await store.outbox.lease('callbacks', 10, NOW, UNTIL);
    assert.equal(first?.jobId, 'callback:1:0');
    assert.equal(second?.jobId, 'callback:2:0');
    await store.outbox.markSent(first.id, NOW);
    // The second failed for good (no re-drive time): it stays failed, whatever its lease said.
    await store.outbox.markAttemptFailed(second.id, 'bad payload', NOW, undefined, true);
    assert.deepEqual(await store.outbox.lease('callbacks', 10, AFTER, UNTIL), []);
    assert.equal(await store.outbox.redriveDue(AFTER, 'callbacks'), 0);
    const [failed] = await store.outbox.failed();
    assert.equal(failed?.jobId, 'callback:2:0');
  },
);

onBothEngines('a re-drive of one queue leaves the failed rows of the others alone', async (_t, store) => {
  await store.outbox.enqueue('callbacks', 'callback:1:0', { callbackId: 1 }, NOW);
  await store.outbox.enqueue('normalise', 'normalise:bat_1', { batchId: 'bat_1' }, NOW);
  for (const row of await store.outbox.pending(10, NOW))
    await store.outbox.markAttemptFailed(row.id, 'past its horizon', NOW, UNTIL, true);
  assert.equal(await store.outbox.redriveDue(AFTER, 'callbacks'), 1);
  const [stillFailed, ...more] = await store.outbox.failed();
  assert.equal(more.length, 0);
  assert.equal(stillFailed?.queue, 'normalise');
  assert.equal(await store.outbox.redriveDue(AFTER), 1, 'without a queue: every queue');
});
