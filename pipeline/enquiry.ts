import type { Deps } from '../core/deps.ts';
import { settleOrder } from '../core/payments/settle.ts';
import { ABANDONED_CODE, EXPIRED_CODE, statusOfCode } from '../core/payments/status.ts';
import { createPoller } from './poller.ts';

const ORDERS_PER_SWEEP = 200;

/**
 * Asks the acquirer about every payment still pending (the payer may never come back to the return page),
 * fails those pending past PENDING_EXPIRY_MS with code XP, and those never taken to the bank within
 * UNPAID_ORDER_EXPIRY_MS with code XA. Settling is idempotent, so several
 * processes sweeping at once only repeat a question. Returns how many payments changed.
 */
export async function sweepPendingPayments(deps: Deps): Promise<number> {
  let changed = 0;
  const now = deps.clock.now();
  // Orders nobody took to the bank expire: failed with XA, and the merchant hears it (a pay link's
  // visitor has no merchant to tell). Nothing was paid, so the reconciliation does not count them.
  const unpaidBefore = new Date(now.getTime() - deps.config.checkout.unpaidExpiryMs).toISOString();
  for (const order of await deps.store.orders.unpaidBefore(unpaidBefore, ORDERS_PER_SWEEP)) {
    const expired = { code: ABANDONED_CODE, txnId: null, txnTime: null };
    if ((await settleOrder(deps, order, expired, 'abandoned')).outcome === 'applied') changed += 1;
  }
  const acquirer = deps.acquirer;
  if (!acquirer) return changed;
  for (const order of await deps.store.orders.awaitingAcquirer(ORDERS_PER_SWEEP)) {
    if (order.acquirerRef === null) continue;
    const answer = await acquirer.enquire(order.acquirerRef);
    const expires =
      statusOfCode(answer.code) === 'pending' &&
      now.getTime() - Date.parse(order.createdAt) > deps.config.checkout.pendingExpiryMs;
    const { outcome } = expires
      ? await settleOrder(deps, order, { ...answer, code: EXPIRED_CODE }, 'expiry')
      : await settleOrder(deps, order, answer, 'enquiry');
    if (outcome === 'applied') changed += 1;
  }
  return changed;
}

/** The sweep on a timer, in whichever process runs the pipeline (the web process in embedded mode). */
export function createEnquirySweep(deps: Deps) {
  const log = deps.logger.child({ component: 'enquiry' });
  return createPoller(
    () =>
      sweepPendingPayments(deps).then(
        (changed) => {
          if (changed > 0) log.info({ changed }, 'pending payments resolved');
          return { more: false };
        },
        (err: unknown) => {
          log.error({ err }, 'pending payment sweep failed');
          return { more: false };
        },
      ),
    deps.config.checkout.enquiryIntervalMs,
  );
}
