/**
 * PostgreSQL crashes and an operator starts it again (decisions 252, 253). A web process and a worker on it
 * and on Redis are left running, as they would be on their own machines: while it is down the web process
 * says so (503, Retry-After, not ready); once it is back, without any step on amil's side, every batch the
 * bank had answered 200 and every batch it retried is in its agency's ledger once, and every callback,
 * including those that were failing across the crash, reaches the merchant. The same under one process
 * without Redis; and processes started while it is down wait for it and come up with it.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { Queue } from 'bullmq';
import { NORMALISE_QUEUE } from '../../core/queues.ts';
import { businessDate, prevDay } from '../../core/time.ts';
import { verifyCallback } from '../../core/signatures.ts';
import { DEMO_PASSWORD, bankRecord, onCleanup } from '../helpers.ts';
import { startPostgres } from '../support/postgres.ts';
import { startRedis } from '../support/redis.ts';
import { LZS_KEY, startMerchant } from '../support/merchant.ts';
import {
  clusterEnv,
  complaints,
  payAcross,
  pipelineState,
  queryRows,
  startMachine,
  waitUntil,
} from '../support/many-machines.ts';
import { readyWithin, SERVER_LISTENING } from './processes.ts';

const PER_BATCH = 20;
/** How long the server stays down: longer than the jobs' retry horizon below, so they exhaust it. */
const DOWN_MS = 6000;

/** How long after the restart the bank's batches must all be taken. */
const TAKEN_WITHIN_MS = 45_000;

/**
 * The partner bank, posting batches of one day to `url` as it does in production. It gives up when the test
 * ends, so a web process that never comes back fails the test instead of keeping its file running for ever.
 */
function partnerBank(t: TestContext, url: string, day: string) {
  /** The postings of the batches answered 200, and the answers that said to come back later. */
  const stored = new Set<string>();
  const refusals: { status: number; retryAfter: string | null; type: string }[] = [];
  let lastFailure = '';
  let gaveUp = false;
  onCleanup(t, () => {
    gaveUp = true;
  });
  /** Posts one batch: again after each refusal or cut connection, until it is taken. */
  const postUntilStored = async (nth: number) => {
    const records = Array.from({ length: PER_BATCH }, (_, i) =>
      bankRecord({
        agency: (nth + i) % 2 === 0 ? 'BANKLZS' : 'BANKPPZ',
        amount: Number(((1000 + nth * PER_BATCH + i) / 100).toFixed(2)),
        time: `${day}T00:${String(nth % 60).padStart(2, '0')}:${String(i).padStart(2, '0')}+08:00`,
      }),
    );
    const body = JSON.stringify({ transactions: records });
    for (;;) {
      if (gaveUp) throw new Error(`the bank gave up on batch ${nth}; its last failure: ${lastFailure}`);
      const response = await fetch(`${url}/api/bank/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD },
        body,
      }).catch((error: unknown) => {
        lastFailure = String((error as Error).cause ?? error);
        return undefined;
      });
      if (response?.status === 200) {
        for (const r of records) stored.add(r.orderno);
        return;
      }
      if (response) {
        const text = await response.text();
        const type = /"type":"([^"]*)"/.exec(text)?.[1] ?? text;
        refusals.push({ status: response.status, retryAfter: response.headers.get('retry-after'), type });
        lastFailure = `${response.status} ${type}`;
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  };
  let next = 0;
  return {
    stored,
    refusals,
    /** Waits for `posting` to end, giving up after TAKEN_WITHIN_MS and saying why with `explain()`. */
    async taken(posting: Promise<unknown>, explain: () => string): Promise<void> {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>(
        (resolve) => (timer = setTimeout(() => resolve('late'), TAKEN_WITHIN_MS)),
      );
      const outcome = await Promise.race([posting, late]).finally(() => clearTimeout(timer));
      if (outcome !== 'late') return;
      gaveUp = true;
      assert.fail(
        `batches not taken ${TAKEN_WITHIN_MS} ms after the restart (${lastFailure}):\n${explain()}`,
      );
    },
    /** Two of the bank's connections posting a batch every 50 ms each, until `until` says to stop. */
    post: (until: () => boolean) =>
      Promise.all(
        [0, 1].map(async () => {
          while (!until()) {
            await postUntilStored((next += 1));
            await new Promise((r) => setTimeout(r, 50));
          }
        }),
      ),
    /** Each refusal, a batch in flight at the crash included, was one to send again: a 503, not a 500. */
    checkRefusals(logs: string) {
      assert.ok(refusals.length > 0, 'the bank met the outage');
      for (const refusal of refusals) {
        assert.deepEqual(
          refusal,
          { status: 503, retryAfter: '2', type: 'https://docs.amil.my/problems/unavailable' },
          logs,
        );
      }
    },
  };
}

test(
  'PostgreSQL crashed and started again: the web process and the worker carry on by themselves, nothing accepted is lost',
  { timeout: 120_000 },
  async (t) => {
    const postgres = await startPostgres(t);
    const redis = await startRedis(t);
    // The merchant refuses callbacks until the store is back, so their retries span the crash.
    let merchantUp = false;
    const merchant = await startMerchant(t, () => (merchantUp ? 200 : 503));
    const env = clusterEnv(postgres, redis, {
      CALLBACK_RETRY_MS: '200',
      // A job failing through the outage runs out of its retries within it; the reconciler drives it again.
      PIPELINE_RETRY_BASE_MS: '200',
      PIPELINE_RETRY_MAX_MS: '1000',
      PIPELINE_RETRY_HORIZON_MS: '2000',
      PIPELINE_RECONCILE_MS: '1000',
      PIPELINE_RECONCILE_GRACE_MS: '3000',
    });
    const web = await startMachine(t, 'web', env);
    const worker = await startMachine(t, 'worker', env);
    const machines = [web, worker];
    // Yesterday in Kuala Lumpur: every posting's time is past, whenever the test runs.
    const day = prevDay(businessDate(new Date()));

    const waitFor = (check: () => Promise<boolean>, what: string) =>
      waitUntil(check, what).catch(async (error: unknown) => {
        t.diagnostic(await pipelineState(postgres.url, redis).catch((e: unknown) => String(e)));
        for (const m of machines) t.diagnostic(`${m.dir}:\n${complaints(m)}`);
        throw error;
      });

    const bank = partnerBank(t, web.process.url, day);

    // Before: postings, and two orders paid whose callbacks the merchant keeps refusing.
    let batchesBefore = 0;
    await bank.post(() => (batchesBefore += 1) > 6);
    const orders = [
      await payAcross(web.process.url, web.process.url, `${merchant.url}/callback`, 1),
      await payAcross(web.process.url, web.process.url, `${merchant.url}/callback`, 2),
    ];
    await merchant.find((r) => r.headers['x-amil-callback-id'] !== undefined, 'a refused callback attempt');

    // The crash, with the bank posting through it. The normalising jobs of the last batches before it wait in
    // Redis (their queue paused) until the store is down: the worker then fails them until they run out of
    // retries, and they must still be done once the store is back.
    let restartedAt = 0;
    const normalise = new Queue(NORMALISE_QUEUE, { connection: { url: redis.url }, prefix: redis.prefix });
    onCleanup(t, () => normalise.close());
    await normalise.pause();
    const posting = bank.post(() => restartedAt > 0 && Date.now() - restartedAt > 2000);
    await waitFor(
      async () => ((await normalise.getJobCounts('paused')).paused ?? 0) >= 2,
      'jobs waiting in Redis',
    );
    await postgres.crash();
    const downSince = Date.now();
    await normalise.resume();

    await t.test('while it is down the web process says so, and is not ready', async () => {
      const ready = await fetch(`${web.process.url}/health/ready`);
      assert.equal(ready.status, 503, 'not ready without its store');
      const live = await fetch(`${web.process.url}/health/live`);
      assert.equal(live.status, 200, 'yet alive: nothing to restart');
      await waitFor(
        () => Promise.resolve(bank.refusals.length > 0),
        'a batch refused while the store is down',
      );
    });

    await new Promise((r) => setTimeout(r, Math.max(0, DOWN_MS - (Date.now() - downSince))));
    await postgres.restart();
    restartedAt = Date.now();
    merchantUp = true;

    await t.test('once it is back the web process is ready again, by itself', async () => {
      assert.equal(await readyWithin(web.process.url, 15_000), 200);
      assert.equal(web.process.child.exitCode, null, 'the web process never exited');
      assert.equal(worker.process.child.exitCode, null, 'nor the worker');
    });

    await bank.taken(posting, () => machines.map((m) => `${m.dir}:\n${complaints(m)}`).join('\n'));
    await t.test('every refusal the bank met said to send the batch again', () =>
      bank.checkRefusals(complaints(web)),
    );
    // After: more postings, and an order paid on the store that came back.
    orders.push(await payAcross(web.process.url, web.process.url, `${merchant.url}/callback`, 3));

    await t.test('every batch the bank was told was taken is in its ledger, once', async () => {
      const ledgered = async () =>
        Number(
          (await queryRows<{ n: string }>(postgres.url, 'SELECT count(*) AS n FROM ledger_entries'))[0]!.n,
        );
      await waitFor(async () => (await ledgered()) >= bank.stored.size, 'every posting in a ledger');
      await new Promise((r) => setTimeout(r, 1000));
      const rows = await queryRows<{ n: string; distinct_n: string; ordernos: string[] }>(
        postgres.url,
        `SELECT count(*) AS n, count(DISTINCT (sink, posting_id)) AS distinct_n,
              array_agg(DISTINCT p.orderno) AS ordernos
         FROM ledger_entries l JOIN bank_postings p ON p.id = l.posting_id`,
      );
      assert.equal(Number(rows[0]!.n), bank.stored.size, 'one ledger entry per posting');
      assert.equal(Number(rows[0]!.distinct_n), bank.stored.size, 'no posting twice');
      assert.deepEqual(
        rows[0]!.ordernos.sort(),
        [...bank.stored].sort(),
        'the postings the bank sent, no other',
      );
    });

    await t.test('every callback reaches the merchant, signed, once it answers', async () => {
      const delivered = () =>
        merchant.received.filter(
          (r) => r.headers['x-amil-callback-id'] !== undefined && r.answeredWith === 200,
        );
      await waitFor(
        () => Promise.resolve(new Set(delivered().map((r) => r.form.get('orderNo'))).size === orders.length),
        'a delivered callback of every order',
      );
      for (const callback of delivered()) assert.ok(verifyCallback(callback.form, LZS_KEY));
      const states = await queryRows<{ state: string; n: string }>(
        postgres.url,
        'SELECT state, count(*) AS n FROM callbacks GROUP BY state',
      );
      assert.deepEqual(
        states.map((s) => [s.state, Number(s.n)]),
        [['delivered', orders.length]],
        'each order’s callback delivered, none left queued or given up',
      );
    });

    await t.test('the worker told ops the store was down, not Redis, and that it came back', () => {
      const said = worker.process.output();
      assert.match(said, /cannot read the outbox from the store/);
      assert.match(said, /the store answers again: the outbox flows again/);
      assert.doesNotMatch(said, /cannot reach redis/);
      assert.match(
        said,
        /re-drove jobs failed past their retry horizon/,
        'jobs that ran out of retries were driven again',
      );
      // Every job failed at every retry meanwhile: said in one line per 30 s, not one per failure.
      const outageLines = said
        .split('\n')
        .filter((l) => l.includes('jobs fail: the store cannot be reached'));
      assert.equal(outageLines.length, 1, 'one line for the whole outage');
      assert.doesNotMatch(said, /"msg":"job failed"/);
    });
  },
);

test(
  'PostgreSQL crashed and started again under one process without Redis (its pipeline in-process): nothing accepted is lost',
  { timeout: 120_000 },
  async (t) => {
    const postgres = await startPostgres(t);
    const web = await startMachine(t, 'web', { DATABASE_URL: postgres.url, LOG_LEVEL: 'info' });
    const bank = partnerBank(t, web.process.url, prevDay(businessDate(new Date())));
    let restartedAt = 0;
    const posting = bank.post(() => restartedAt > 0 && Date.now() - restartedAt > 2000);
    await new Promise((r) => setTimeout(r, 500));
    await postgres.crash();
    await new Promise((r) => setTimeout(r, 3000));
    await postgres.restart();
    restartedAt = Date.now();
    await bank.taken(
      posting,
      () => `exit code ${web.process.child.exitCode}:\n${web.process.output().slice(-6000)}`,
    );
    assert.equal(await readyWithin(web.process.url, 15_000), 200, 'ready again by itself');
    bank.checkRefusals(complaints(web));
    await waitUntil(
      async () =>
        Number(
          (await queryRows<{ n: string }>(postgres.url, 'SELECT count(*) AS n FROM ledger_entries'))[0]!.n,
        ) >= bank.stored.size,
      'every posting in a ledger',
    ).catch((error: unknown) => {
      t.diagnostic(complaints(web));
      throw error;
    });
    const [counted] = await queryRows<{ n: string; distinct_n: string }>(
      postgres.url,
      'SELECT count(*) AS n, count(DISTINCT (sink, posting_id)) AS distinct_n FROM ledger_entries',
    );
    assert.equal(Number(counted!.n), bank.stored.size, 'one ledger entry per posting');
    assert.equal(Number(counted!.distinct_n), bank.stored.size, 'no posting twice');
  },
);

test(
  'a worker and a web process started while PostgreSQL is down wait for it, and work once it is up, without a restart',
  { timeout: 120_000 },
  async (t) => {
    const postgres = await startPostgres(t);
    const redis = await startRedis(t);
    const env = clusterEnv(postgres, redis);
    // A site powered on at once: the database is still recovering when amil's processes start.
    await postgres.crash();
    // Each is seen waiting, however long it takes to load (a fixed pause raced a slow machine's start-up:
    // the database was back before the process first asked for it). Either one exiting rejects.
    const waitingLine = /"msg":"(waiting) for the database: it cannot be reached yet"/;
    const [worker, web] = await Promise.all([
      startMachine(t, 'worker', env, undefined, waitingLine),
      startMachine(t, 'web', env, undefined, waitingLine),
    ]);
    await new Promise((r) => setTimeout(r, 2000));
    const started = /"msg":"(listening|worker started)"/;
    for (const m of [worker, web]) {
      assert.doesNotMatch(m.process.output(), started, 'neither process starts without its database');
    }
    await postgres.restart();
    await waitUntil(
      () => Promise.resolve([worker, web].every((m) => started.test(m.process.output()))),
      'both processes started once the database is back',
    );
    for (const m of [worker, web]) assert.match(m.process.output(), /the database answers: starting/);
    const url = SERVER_LISTENING.exec(web.process.output())?.[1] ?? '';
    const bank = partnerBank(t, url, prevDay(businessDate(new Date())));
    let batches = 0;
    await bank.post(() => (batches += 1) > 2);
    assert.deepEqual(bank.refusals, [], 'every batch taken at once');
    await waitUntil(
      async () =>
        Number(
          (await queryRows<{ n: string }>(postgres.url, 'SELECT count(*) AS n FROM ledger_entries'))[0]!.n,
        ) === bank.stored.size,
      'the worker ledgers the postings',
    );
  },
);
