/**
 * Paid orders for the callback benchmarks, made through the real store code (createOrder, startAttempt,
 * settleOrder): each settlement queues its order's callback to `callbackUrl`. Not timed by the benchmark.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { SANDBOX_BANKS } from '../core/acquirer/sandbox.ts';
import { seedDemoData } from '../core/bootstrap.ts';
import type { Deps } from '../core/deps.ts';
import { settleOrder } from '../core/payments/settle.ts';
import { formatKl } from '../core/time.ts';
import { newOrderNo } from '../ingest/checkout/service.ts';

/** settleOrder's own time over the first and the last `sampled` orders made. */
export interface SettleTimes {
  settleFirstMs: number;
  settleLastMs: number;
  sampled: number;
}

/**
 * Seeds the demo agencies (unless `seeded`) and pays `count` orders of LZS, refNos `${prefix}${i}`. The
 * payer gives no e-mail unless `receipts`: a paid order with one also queues the payer's receipt, a job of
 * its own (an e-mail), which the drain would then run too and count as callback time.
 */
export async function payOrders(
  deps: Deps,
  callbackUrl: string,
  count: number,
  options: { prefix: string; seeded?: boolean; receipts?: boolean },
): Promise<SettleTimes> {
  // settleOrder's own time over the first and the last orders made (the callbacks queued so far differ).
  const sampled = Math.min(1000, Math.floor(count / 4));
  let settleFirstMs = 0;
  let settleLastMs = 0;
  const bank = SANDBOX_BANKS.find((b) => b.id === 'SBX00') ?? { id: 'SBX00', name: 'Sandbox' };
  if (!options.seeded) await seedDemoData(deps.store, new Date());
  for (let i = 0; i < count; i += 1) {
    const now = new Date();
    const at = now.toISOString();
    const { created, order } = await deps.store.orders.createOrder({
      orderNo: newOrderNo(now),
      agencyCode: 'LZS',
      refNo: `${options.prefix}${i}`,
      extraData: i % 4 === 0 ? `X${i}` : null,
      paymentCategory: null,
      amountSen: 1000,
      email: options.receipts ? 'ali@example.my' : '',
      returnUrl: callbackUrl,
      formToken: randomBytes(16).toString('base64url'),
      at,
    });
    if (!created) throw new Error(`order ${i} was not created (orderNo collision?)`);
    const acquirerRef = `sbx_bench_${options.prefix}${i}`;
    const refused = await deps.store.orders.startAttempt(order.orderNo, {
      paymentMethod: 'fpx',
      bankId: bank.id,
      bankName: bank.name,
      addChargeSen: 0,
      acquirerRef,
      at,
    });
    if (refused) throw new Error(`order ${i}: attempt not recorded (${refused})`);
    const s0 = performance.now();
    const { outcome } = await settleOrder(
      deps,
      { ...order, acquirerRef },
      { code: '00', txnId: `FPX${options.prefix}${String(i).padStart(12, '0')}`, txnTime: formatKl(now) },
      'bench',
    );
    const settleMs = performance.now() - s0;
    if (i < sampled) settleFirstMs += settleMs;
    if (i >= count - sampled) settleLastMs += settleMs;
    if (outcome !== 'applied') throw new Error(`order ${i}: settle ${outcome}`);
  }
  return { settleFirstMs, settleLastMs, sampled };
}
