import type { AcquirerStatus } from '../acquirer/types.ts';
import type { Deps } from '../deps.ts';
import type { OrderRow, SettleOutcome } from '../store/index.ts';
import { directCallbackFields } from './callback-fields.ts';
import { receiptRecipient } from './receipt.ts';
import { ABANDONED_CODE, EXPIRED_CODE, statusOfCode } from './status.ts';

/**
 * Applies what the acquirer says of an order's payment: its status by the rule of 2.4, an event, the
 * direct callback to the order's returnUrl and, for a success, the payer's receipt, all in one transaction
 * (the pipeline delivers both). No answer yet changes nothing; a result decided on an order that has since
 * gone to the bank (or to another attempt) changes nothing; a result contradicting a final status becomes an
 * anomaly (`settlementOf`, store/orders.ts). `order` is the order as the caller read it to decide.
 */
export async function settleOrder(
  deps: Pick<Deps, 'store' | 'clock' | 'logger' | 'acquirer'>,
  order: OrderRow,
  acquirer: AcquirerStatus,
  source: string,
): Promise<{ outcome: SettleOutcome; order: OrderRow }> {
  if (acquirer.code === '') return { outcome: 'unchanged', order };
  const result = await deps.store.orders.settle(
    order.orderNo,
    {
      status: statusOfCode(acquirer.code),
      code: acquirer.code,
      txnId: acquirer.txnId,
      txnTime: acquirer.txnTime,
      source,
      // Decided on the order as the caller read it: on another attempt by the time it is settled, it is stale.
      attempt: order.acquirerRef,
      ownTimeout: acquirer.code === ABANDONED_CODE || acquirer.code === EXPIRED_CODE,
    },
    deps.clock.now().toISOString(),
    (settled) =>
      settled.returnUrl
        ? { url: settled.returnUrl, fields: directCallbackFields(settled, deps.acquirer?.sandbox === true) }
        : undefined,
    receiptRecipient,
  );
  if (result.outcome === 'unchanged' && result.order.acquirerRef !== order.acquirerRef) {
    // Not news (the answer to the attempt now under way decides the payment), but ops can see it happened.
    deps.logger.info(
      { order_no: order.orderNo, code: acquirer.code, source },
      'result decided before the payer started another attempt: not applied',
    );
  } else if (result.outcome === 'contradiction') {
    deps.logger.warn(
      { order_no: order.orderNo, stored: result.order.status, code: acquirer.code, source },
      'acquirer result contradicts a final payment: recorded as an anomaly, not applied',
    );
  }
  return result;
}
