import { formatSen } from '../money.ts';
import type { OrderRow } from '../store/index.ts';

/**
 * The `fpx` member of a callback (spec 2.4: a JSON string). Beyond the two members the spec names, what a
 * merchant needs to reconcile: amounts (gross, net and add charge), the seller order number, the
 * reference as `<refNo>~<extraData>` (the 2.1 convention), and the bank; `sandbox: true` when the
 * sandbox acquirer took the payment (no money moved).
 */
export function fpxDetail(order: OrderRow, sandbox: boolean): string {
  return JSON.stringify({
    payment_method: order.paymentMethod ?? '',
    fpx_debit_auth_code: order.debitAuthCode ?? '',
    fpx_seller_order_no: order.orderNo,
    fpx_seller_ex_order_no: order.extraData ? `${order.refNo}~${order.extraData}` : order.refNo,
    fpx_txn_amount: formatSen(order.amountSen + order.addChargeSen),
    fpx_order_amount: formatSen(order.amountSen),
    fpx_add_charge: formatSen(order.addChargeSen),
    fpx_buyer_bank_id: order.bankId ?? '',
    fpx_buyer_bank_name: order.bankName ?? '',
    fpx_txn_id: order.fpxTxnId ?? '',
    fpx_txn_time: order.fpxTxnTime ?? '',
    payment_category: order.paymentCategory ?? '',
    // A sandbox payment moved no money: a merchant's test system can tell, and production never sees it.
    ...(sandbox && { sandbox: true }),
  });
}

/**
 * Every field of 2.4 but the signature, for the direct callback. `amount` is the order's amount (net), as
 * the merchant made it, with `addCharge` beside it: a merchant checks the callback against its order
 * (decision 27). The gross is `fpx_txn_amount` in the fpx detail.
 */
export function directCallbackFields(order: OrderRow, sandbox: boolean): Record<string, string> {
  return {
    status: order.status,
    orderNo: order.orderNo,
    refNo: order.refNo,
    amount: formatSen(order.amountSen),
    addCharge: formatSen(order.addChargeSen),
    fpxTxnId: order.fpxTxnId ?? '',
    fpxTxnTime: order.fpxTxnTime ?? '',
    agency: order.agencyCode,
    extraData: order.extraData ?? '',
    fpx: fpxDetail(order, sandbox),
  };
}

/**
 * The indirect callback the payer's browser posts (section 6): unsigned, only for success or failed,
 * `extraData` left out when empty, and `amount` gross (amount + addCharge), as spec 2.4 says of it.
 * Undefined while the payment is pending (the payer sees a pending page).
 */
export function indirectCallbackFields(
  order: OrderRow,
  sandbox: boolean,
): Record<string, string> | undefined {
  if (order.status === 'pending') return undefined;
  const fields = directCallbackFields(order, sandbox);
  fields.amount = formatSen(order.amountSen + order.addChargeSen);
  if (fields.extraData === '') delete fields.extraData;
  return fields;
}

/** The header that repeats a direct callback's `callback_id`, for receivers that deduplicate before parsing. */
export const CALLBACK_ID_HEADER = 'X-Amil-Callback-Id';

/**
 * The id a merchant deduplicates a callback on: its order number, then its row id. The row id alone repeats
 * across stores (each numbers its rows from 1: staging and production, a SQLite file reopened after a move
 * to PostgreSQL), and a merchant whose table of seen ids is shared would drop a paid order as a repeat. The
 * order number is random, so two stores do not share it; the row id keeps it unique within the order.
 */
export function callbackWireId(orderNo: string, rowId: number | string): string {
  return `${orderNo}-${rowId}`;
}

/**
 * Adds the callback's stable id to its `fpx` JSON as `callback_id`, so the signature covers it. Every
 * attempt of one callback carries the same id: a merchant that saw it already acknowledges and ignores it
 * (delivery is at least once). A redelivery by ops is a new callback with a new id.
 */
export function withCallbackId(fields: Record<string, string>, callbackId: string): Record<string, string> {
  const fpx = JSON.parse(fields.fpx ?? '{}') as Record<string, unknown>;
  return { ...fields, fpx: JSON.stringify({ callback_id: callbackId, ...fpx }) };
}
