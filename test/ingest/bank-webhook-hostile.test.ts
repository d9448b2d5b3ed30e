import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixedClock } from '../../core/clock.ts';
import { bankRecord, problemOf, startApp, type TestApp } from '../helpers.ts';
import { appDb } from '../support/app-db.ts';

/**
 * Generous: the refusal is meant to take tens of milliseconds. What the bound catches is work that grows with
 * the hostile shape (seconds to minutes); the suite runs a file more than there are cores, and on the 2-core
 * machine a 3.8 MB refusal took 1,126 ms beside two other files.
 */
const REFUSAL_BOUND_MS = 3000;
/** The event loop stays free meanwhile: a 5 ms request that waits for the judging would wait seconds. */
const LOOP_BOUND_MS = 1000;

function unknownKeys(count: number, prefix = 'u'): Record<string, number> {
  const keys: Record<string, number> = {};
  for (let i = 0; i < count; i += 1) keys[`${prefix}${i}`] = 1;
  return keys;
}

/** Posts a hostile body and measures the refusal, with GET /api/version asked while it is in flight. */
async function refuse(app: TestApp, body: string) {
  const started = performance.now();
  const posted = app.postBatch(body);
  // The version request goes out while the batch is read and judged: a frozen event loop holds it up.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const versionStarted = performance.now();
  const version = await fetch(`${app.url}/api/version`);
  const versionMs = performance.now() - versionStarted;
  const response = await posted;
  const problem = await problemOf(response);
  return { status: response.status, problem, ms: performance.now() - started, versionMs, version };
}

test('a hostile webhook batch', async (t) => {
  const app = await startApp(t);

  const SHAPES: { shape: string; body: () => string; pointer: RegExp }[] = [
    {
      shape: '3.8 MB of 5,000 records with 80 unknown properties each (400,000 in all)',
      body: () =>
        JSON.stringify({
          transactions: Array.from({ length: 5000 }, (_, i) => ({ orderno: `O${i}`, ...unknownKeys(80) })),
        }),
      pointer: /^\/transactions\/\d+/,
    },
    {
      shape: '3.8 MB of 5,000 records with 60 unknown properties each (below the per-object limit)',
      body: () =>
        JSON.stringify({
          transactions: Array.from({ length: 5000 }, (_, i) => ({
            orderno: `O${i}`,
            ...unknownKeys(60, 'x_unknown'),
          })),
        }),
      pointer: /^\/transactions\/\d+\/(x_unknown\d+|agency|amount|name|email|time|status|data)$/,
    },
    {
      shape: 'one record with 400,000 unknown properties',
      body: () => JSON.stringify({ transactions: [{ ...bankRecord(), ...unknownKeys(400_000) }] }),
      pointer: /^\/transactions\/0/,
    },
    {
      shape: '400,000 unknown properties in a record’s data',
      body: () => JSON.stringify({ transactions: [bankRecord({ data: unknownKeys(400_000) })] }),
      pointer: /^\/transactions\/0\/data/,
    },
    {
      shape: '400,000 unknown top-level properties',
      body: () => JSON.stringify({ transactions: [bankRecord()], ...unknownKeys(400_000) }),
      pointer: /^$/,
    },
    {
      shape: '5,000 records with every field of the wrong type (45,000 problems)',
      body: () =>
        JSON.stringify({
          transactions: Array.from({ length: 5000 }, (_, i) => ({
            agency: i,
            orderno: i,
            amount: 'x',
            name: 1,
            email: 2,
            time: 3,
            status: 4,
            data: { zakat_city: 5, zakat_ic_no: 6 },
            extra: 7,
          })),
        }),
      pointer: /^\/transactions\/\d+\//,
    },
    {
      shape: 'a value nested 100,000 levels deep',
      body: () =>
        `{"transactions":[${JSON.stringify(bankRecord()).slice(0, -1)},"deep":${'['.repeat(100_000)}${']'.repeat(100_000)}}]}`,
      pointer: /^\/transactions\/0\/deep/,
    },
    {
      shape: 'a 3.8 MB email, name and orderno',
      body: () =>
        JSON.stringify({
          transactions: [
            bankRecord({
              email: `${'a'.repeat(1_300_000)}@x.my`,
              name: ' '.repeat(1_300_000),
              orderno: 'O'.repeat(1_300_000),
            }),
          ],
        }),
      pointer: /^\/transactions\/0\/(email|name|orderno)$/,
    },
  ];

  // The first body of 64 KiB or more starts the webhook's preparing thread (0.8 s on a slow machine): that
  // start-up is not the refusal's, so it happens once, untimed, before the shapes are timed.
  assert.equal((await refuse(app, SHAPES[0]?.body() ?? '')).status, 422);

  for (const { shape, body, pointer } of SHAPES) {
    await t.test(
      `refuses ${shape} within seconds, answering others meanwhile, with pointers, and stores nothing`,
      async (t) => {
        const before = await app.deps.store.bankPostings.counts();
        const result = await refuse(app, body());
        t.diagnostic(
          `refused in ${result.ms.toFixed(0)} ms; /api/version meanwhile ${result.versionMs.toFixed(0)} ms`,
        );
        assert.ok(result.ms < REFUSAL_BOUND_MS, `refused in ${result.ms.toFixed(0)} ms`);
        assert.ok(
          result.versionMs < LOOP_BOUND_MS,
          `/api/version answered in ${result.versionMs.toFixed(0)} ms`,
        );
        assert.equal(result.status, 422);
        assert.equal(result.problem.type, 'https://docs.amil.my/problems/validation-failed');
        const errors = result.problem.errors ?? [];
        assert.ok(errors.length > 0, 'the problems are listed');
        assert.ok(errors.length <= 100, `at most 100 problems listed, got ${errors.length}`);
        assert.ok(
          errors.every((e) => pointer.test(e.pointer)),
          JSON.stringify(errors.slice(0, 5)),
        );
        assert.equal(result.version.status, 200);
        assert.deepEqual(await app.deps.store.bankPostings.counts(), before);
      },
    );
  }

  await t.test('says how many problems were left out when it lists only the first 100', async () => {
    const transactions = Array.from({ length: 300 }, () => bankRecord({ status: 'done' as never }));
    const response = await app.postBatch({ transactions });
    const problem = await problemOf(response);
    assert.equal(problem.errors?.length, 100);
    assert.equal(problem.errors_truncated, true);
    assert.deepEqual(problem.errors?.map((e) => e.pointer).slice(0, 2), [
      '/transactions/0/status',
      '/transactions/1/status',
    ]);
    assert.match(problem.detail ?? '', /300 record/);
    assert.match(problem.detail ?? '', /first 100/);
  });
});

test('posting times far from their receipt', async (t) => {
  // Received 2026-11-21 00:00 UTC; the window (WEBHOOK_TIME_PAST_DAYS, WEBHOOK_TIME_SKEW_MINUTES) is set
  // small so its edges are easy to name.
  const clock = fixedClock('2026-11-21T00:00:00Z');
  const app = await startApp(t, { WEBHOOK_TIME_PAST_DAYS: '30', WEBHOOK_TIME_SKEW_MINUTES: '10' }, { clock });

  for (const time of [
    '9999-12-31T23:59:59-23:59',
    '0000-01-01T00:00:00+23:59',
    '2026-10-21T23:59:59Z',
    '2026-11-21T00:10:01Z',
  ]) {
    await t.test(`refuses a batch whose record has time ${time}, naming it, and stores nothing`, async () => {
      const before = await app.deps.store.bankPostings.counts();
      const late = bankRecord({ time, orderno: `LATE-${time}` });
      const response = await app.postBatch({ transactions: [bankRecord(), bankRecord(), late] });
      assert.equal(response.status, 422);
      const problem = await problemOf(response);
      assert.equal(problem.type, 'https://docs.amil.my/problems/validation-failed');
      assert.deepEqual(
        problem.errors?.map((e) => [e.pointer, e.index, e.orderno]),
        [['/transactions/2/time', 2, late.orderno]],
      );
      assert.match(problem.errors?.[0]?.message ?? '', /30 days before .* 10 minutes after/);
      assert.deepEqual(await app.deps.store.bankPostings.counts(), before);
    });
  }

  await t.test(
    'accepts times at the edges of the window, each on a business day reports can find',
    async () => {
      const edges = ['2026-10-22T00:00:00Z', '2026-11-21T00:10:00Z', '2026-11-21T08:09:59+08:00'];
      const response = await app.postBatch({ transactions: edges.map((time) => bankRecord({ time })) });
      assert.equal(response.status, 200, await response.clone().text());
      const days = await appDb(t, app).rows<{ day: string }>(
        'SELECT business_date AS day FROM bank_postings ORDER BY business_date',
      );
      assert.deepEqual(
        days.map((d) => d.day),
        ['2026-10-22', '2026-11-21', '2026-11-21'],
      );
    },
  );
});
