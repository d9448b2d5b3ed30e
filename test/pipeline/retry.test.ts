import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../core/config.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { delayBefore, jobOptionsFor, retryPolicyFor } from '../../pipeline/retry.ts';
import { bankRecord, onCleanup, startApp } from '../helpers.ts';
import { appDb } from '../support/app-db.ts';

/** The shortest total wait a policy's attempts can add up to (every delay at its most jittered). */
function shortestSpan(policy: ReturnType<typeof retryPolicyFor>): number {
  let total = 0;
  for (let made = 1; made < policy.attempts; made += 1) {
    total += 0.8 * Math.min(policy.baseMs * 2 ** (made - 1), policy.maxMs);
  }
  return total;
}

test('by default a pipeline job retries for at least six hours, its delays doubling up to five minutes', () => {
  const config = loadConfig({});
  const policy = retryPolicyFor(config, 'ledger-LZS');
  assert.equal(policy.horizonMs, 6 * 3_600_000);
  assert.ok(shortestSpan(policy) >= policy.horizonMs, 'the horizon is reached even with the most jitter');
  assert.ok(policy.attempts > 8, 'far past the old budget of 8 attempts');
  for (let made = 1; made < policy.attempts; made += 1) {
    const delay = delayBefore(policy, made);
    assert.ok(delay <= 300_000 && delay >= 0.8 * Math.min(1000 * 2 ** (made - 1), 300_000));
  }
  assert.equal(jobOptionsFor(config, 'ledger-LZS').attempts, policy.attempts);
  assert.equal(jobOptionsFor(config, 'ledger-LZS').removeOnFail, false, 'failed jobs stay visible');
});

test("the nightly run, its e-mail and a payer's receipt retry for a day, and any job can be given its own horizon", () => {
  assert.equal(retryPolicyFor(loadConfig({}), 'recon-email').horizonMs, 86_400_000);
  assert.equal(retryPolicyFor(loadConfig({}), 'receipts').horizonMs, 86_400_000);
  assert.equal(retryPolicyFor(loadConfig({}), 'recon-nightly').horizonMs, 86_400_000);
  // `callback=` is still accepted (a configuration of an earlier release loads) and moves no job's horizon.
  const config = loadConfig({ PIPELINE_RETRY_HORIZONS: 'normalise=600000,ledger=0,callback=1000' });
  assert.equal(retryPolicyFor(config, 'normalise').horizonMs, 600_000);
  assert.equal(retryPolicyFor(config, 'ledger-PPZ').attempts, 1, 'a zero horizon: one attempt');
  assert.equal(retryPolicyFor(config, 'recon-email').horizonMs, 21_600_000, 'the rest keep the default');
});

test('a retry horizon for a job that does not exist is a configuration problem, listed with the rest', () => {
  assert.throws(
    () => loadConfig({ PIPELINE_RETRY_HORIZONS: 'normalize=60000', PIPELINE_RETRY_MAX_MS: 'soon' }),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.problems.some((p) => p.includes('PIPELINE_RETRY_HORIZONS')) &&
      err.problems.some((p) => p.includes('PIPELINE_RETRY_MAX_MS')),
  );
});

test('embedded mode: a job past its retry horizon shows as failed, then finishes on its own once the dependency is back', async (t) => {
  const app = await startApp(t, { PIPELINE_RETRY_MAX_MS: '200' });
  const repair = await appDb(t, app).failInserts('ledger_entries', 'sink', 'LZS', 'LZS ledger down');
  const relay = createInProcessRuntime(app.deps, { pollMs: 20, maxAttempts: 2, backoffMs: 10 });
  relay.start();
  onCleanup(t, () => relay.stop());
  assert.equal((await app.postBatch({ transactions: [bankRecord()] })).status, 200);
  const failedQueues = async () => (await relay.failed()).map((f) => f.queue);
  for (let waited = 0; !(await failedQueues()).includes('ledger-LZS'); waited += 20) {
    if (waited > 10_000) assert.fail('the ledger job never showed as failed');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  await repair(); // the dependency is back; nobody runs `amil queues retry`
  for (let waited = 0; (await app.deps.store.ledger.entries('LZS')).length === 0; waited += 20) {
    if (waited > 10_000) assert.fail('the failed job was never re-driven');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.deepEqual(await relay.failed(), []);
});
