import type { OrderRow } from '../store/index.ts';

/**
 * Where an order's receipt goes: its e-mail once the payment succeeded. A failed or pending payment gets
 * none: no money was taken (or not yet), and the result page says so; a pending one that later succeeds
 * gets its receipt then (decision in docs/decisions.md).
 */
export function receiptRecipient(order: OrderRow): string | undefined {
  return order.status === 'success' && order.email !== '' ? order.email : undefined;
}
