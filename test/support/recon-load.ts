import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { fixedClock } from '../../core/clock.ts';
import type { Deps } from '../../core/deps.ts';
import { statusOfCode } from '../../core/payments/status.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { startApp, type TestApp } from '../helpers.ts';
import { AS_OF, type GeneratedDay } from './recon-day.ts';

/** Posts the generated day through the real webhook and checkout store, each at its own time. */
export async function loadDay(
  t: TestContext,
  generated: GeneratedDay,
  env: Record<string, string> = {},
  overrides: Partial<Deps> = {},
): Promise<TestApp> {
  const clock = fixedClock('2026-11-18T00:00:00Z');
  const app = await startApp(t, { LOG_LEVEL: 'warn', ...env }, { clock, ...overrides });
  const relay = createInProcessRuntime(app.deps, { pollMs: 20, maxAttempts: 3, backoffMs: 10 });
  for (const batch of generated.batches) {
    clock.set(batch.at);
    const response = await app.postBatch({ transactions: batch.records });
    assert.equal(response.status, 200, await response.clone().text());
  }
  const { orders } = app.deps.store;
  for (const plan of generated.checkout) {
    const at = plan.createdAt.toISOString();
    await orders.createOrder({
      orderNo: plan.orderNo,
      agencyCode: 'LZS',
      refNo: `REF-${plan.orderNo}`,
      extraData: null,
      paymentCategory: plan.category,
      amountSen: plan.amountSen,
      email: `${plan.orderNo.toLowerCase()}@example.my`,
      returnUrl: '',
      formToken: 'token',
      at,
    });
    if (!plan.method) continue;
    await orders.startAttempt(plan.orderNo, {
      paymentMethod: plan.method,
      bankId: null,
      bankName: null,
      addChargeSen: 0,
      acquirerRef: `ACQ-${plan.orderNo}`,
      at,
    });
    for (const result of plan.results) {
      await orders.settle(
        plan.orderNo,
        { status: statusOfCode(result.code), code: result.code, txnId: 'T', txnTime: at, source: 'test' },
        result.at.toISOString(),
        () => undefined,
      );
    }
  }
  clock.set(AS_OF);
  await relay.drain();
  await relay.stop();
  return app;
}

/** Runs the pipeline until nothing is ready (at the app's current clock). */
export async function drainPipeline(app: TestApp, options: { backoffMs?: number } = {}): Promise<void> {
  const relay = createInProcessRuntime(app.deps, {
    pollMs: 10,
    maxAttempts: 5,
    backoffMs: options.backoffMs ?? 10,
  });
  await relay.drain();
  await relay.stop();
}
