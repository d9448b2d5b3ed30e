/**
 * The micro-batcher of the PostgreSQL store (core/store/pg/micro-batch.ts, decision 195), on its own: how
 * long an item may wait, what makes a batch go, and that a failing item fails alone. The timers are mocked,
 * so "not held back beyond the linger" is a fact of the code, not of a machine's load; the statements these
 * batches run are tested on the real engines in store-callback-batches-engines.test.ts.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { microBatcher, type BatchRunner } from '../../core/store/pg/micro-batch.ts';

const OPTIONS = { linger: { lingerMs: 2, upTo: 4 }, maxBatch: 6, inFlight: 1 };

/** A runner that records each batch it is given and answers when `release` is called (or at once). */
function recordingRunner(t: TestContext, holdBatches = false) {
  const batches: number[][] = [];
  const releases: (() => void)[] = [];
  const run: BatchRunner<number, string> = async (items) => {
    batches.push([...items]);
    if (holdBatches) await new Promise<void>((resolve) => releases.push(resolve));
    if (items.includes(-1)) throw new Error('item -1 fails');
    return items.map((i) => `answer ${i}`);
  };
  t.mock.timers.enable({ apis: ['setTimeout'] });
  return { batches, releases, run };
}

/** Lets the promise callbacks queued so far run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test('a lone item waits no longer than the linger, then runs alone', async (t) => {
  const { batches, run } = recordingRunner(t);
  const submit = microBatcher(run, OPTIONS);
  const answer = submit(7);
  t.mock.timers.tick(1);
  await settle();
  assert.deepEqual(batches, [], 'still within its linger');
  t.mock.timers.tick(1);
  assert.equal(await answer, 'answer 7');
  assert.deepEqual(batches, [[7]]);
});

test('items arriving within the linger share one batch, each answered its own', async (t) => {
  const { batches, run } = recordingRunner(t);
  const submit = microBatcher(run, OPTIONS);
  const first = submit(1);
  t.mock.timers.tick(1);
  const second = submit(2);
  t.mock.timers.tick(1);
  assert.deepEqual(await Promise.all([first, second]), ['answer 1', 'answer 2']);
  assert.deepEqual(batches, [[1, 2]], 'the second did not start a wait of its own');
});

test('a full batch goes at once, without waiting for the linger', async (t) => {
  const { batches, run } = recordingRunner(t);
  const submit = microBatcher(run, OPTIONS);
  const answers = Promise.all([1, 2, 3, 4].map(submit));
  await settle();
  assert.deepEqual(batches, [[1, 2, 3, 4]], 'no timer had to fire');
  assert.deepEqual(await answers, ['answer 1', 'answer 2', 'answer 3', 'answer 4']);
});

test('items arriving while every slot is busy go together as soon as one is free', async (t) => {
  const { batches, releases, run } = recordingRunner(t, true);
  const submit = microBatcher(run, OPTIONS);
  const first = submit(1);
  t.mock.timers.tick(2);
  await settle();
  assert.deepEqual(batches, [[1]]);
  // The one slot is taken: these wait for it, however long the linger, and then go as one batch.
  const rest = [2, 3, 4, 5, 6, 7, 8].map(submit);
  t.mock.timers.tick(10);
  await settle();
  assert.deepEqual(batches, [[1]]);
  releases.shift()!();
  assert.equal(await first, 'answer 1');
  await settle();
  assert.deepEqual(batches, [[1], [2, 3, 4, 5, 6, 7]], 'at most maxBatch at once');
  releases.shift()!();
  await settle();
  releases.shift()!();
  assert.deepEqual(
    await Promise.all(rest),
    [2, 3, 4, 5, 6, 7, 8].map((i) => `answer ${i}`),
  );
});

test('one failing item in a batch fails alone, and the others of its batch are answered', async (t) => {
  const { batches, run } = recordingRunner(t);
  const submit = microBatcher(run, OPTIONS);
  const outcomes = Promise.allSettled([submit(1), submit(-1), submit(3)]);
  t.mock.timers.tick(2);
  const [one, failing, three] = await outcomes;
  assert.deepEqual(one, { status: 'fulfilled', value: 'answer 1' });
  assert.equal(failing?.status, 'rejected');
  assert.deepEqual(three, { status: 'fulfilled', value: 'answer 3' });
  assert.deepEqual(batches, [[1, -1, 3], [1], [-1], [3]], 'the batch, then each of its items alone');
});
