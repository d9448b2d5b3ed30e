/** A checkout order as the store tests make them: LZS, RM 10.00 fitrah, at a fixed instant. */
import type {
  CallbackDraft,
  CallbacksRepository,
  NewAttempt,
  NewOrder,
  OrderRow,
  OrdersRepository,
  PaymentResult,
  Store,
} from '../../core/store/index.ts';

/** Instants on either side of Kuala Lumpur's midnight (UTC+8): 2026-11-19T16:00Z is the 20th there. */
export const AROUND_KL_MIDNIGHT = [
  '2026-11-19T15:59:59.000Z',
  '2026-11-19T16:00:00.000Z',
  '2026-11-20T02:00:00.000Z',
  '2026-11-20T15:59:59.999Z',
  '2026-11-20T16:00:00.000Z',
] as const;

/** The instant the store tests' orders are made at. */
export const ORDER_AT = '2026-11-20T02:00:00.000Z';

/** A new order of this number; `overrides` changes any field. */
export function newOrder(orderNo: string, overrides: Partial<NewOrder> = {}): NewOrder {
  return {
    orderNo,
    agencyCode: 'LZS',
    refNo: `REF-${orderNo}`,
    extraData: null,
    paymentCategory: 'fitrah',
    amountSen: 1000,
    email: 'payer@example.my',
    returnUrl: 'https://merchant.example/return',
    formToken: 'form-token',
    at: ORDER_AT,
    ...overrides,
  };
}

/** The callback a settled order queues in the store tests: to its returnUrl, with its number and status. */
export function callbackToMerchant(order: OrderRow): CallbackDraft {
  return { url: order.returnUrl, fields: { orderNo: order.orderNo, status: order.status } };
}

/** Takes a created order to the bank at `at` by `paymentMethod` (FPX unless said), as the pay page does. */
export async function startPayment(
  orders: OrdersRepository,
  orderNo: string,
  at: string,
  paymentMethod: NewAttempt['paymentMethod'] = 'fpx',
): Promise<void> {
  const refused = await orders.startAttempt(orderNo, {
    paymentMethod,
    bankId: 'TEST0021',
    bankName: 'Test Bank',
    addChargeSen: 0,
    acquirerRef: `ACQ-${orderNo}`,
    at,
  });
  if (refused !== undefined) throw new Error(`${orderNo}: attempt refused (${refused})`);
}

/**
 * Pays a created order as the checkout does: an FPX attempt, then the acquirer's result settled at `at`,
 * which queues its callback. Paid (00) unless `result` says otherwise.
 */
export async function payOrder(
  orders: OrdersRepository,
  orderNo: string,
  at: string,
  result: Pick<PaymentResult, 'status' | 'code'> = { status: 'success', code: '00' },
  callback: (order: OrderRow) => CallbackDraft | undefined = callbackToMerchant,
): Promise<void> {
  await startPayment(orders, orderNo, at);
  await orders.settle(
    orderNo,
    { ...result, txnId: `T-${orderNo}`, txnTime: '20261120100500', source: 'test' },
    at,
    callback,
  );
}

/** `n` orders (`${prefix}0`, `${prefix}1`, ...) paid at `at`, each with its callback queued to `url`. */
export async function paidOrders(
  orders: OrdersRepository,
  url: string,
  n: number,
  at: string = ORDER_AT,
  prefix = 'CB',
): Promise<string[]> {
  const orderNos = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  for (const orderNo of orderNos) {
    await orders.createOrder(newOrder(orderNo, { returnUrl: url, at }));
    await payOrder(orders, orderNo, at);
  }
  return orderNos;
}

/** Records each callback's delivery (a 200 at `at`), all asked for at once, as one wave of deliveries. */
export async function deliverAll(
  callbacks: CallbacksRepository,
  ids: readonly number[],
  at: string,
): Promise<void> {
  const delivered = { at, statusCode: 200, latencyMs: 3, error: null, responsePrefix: '' };
  await Promise.all(ids.map((id) => callbacks.finishAttempt(id, delivered, { state: 'delivered' })));
}

/** How many payments (orders of checkout and pay links) the agency has, on any day: what the report counts. */
export async function paymentCount(store: Pick<Store, 'paymentReport'>, agency = 'LZS'): Promise<number> {
  const everyDay = { agency, firstDay: '0001-01-01', lastDay: '9999-12-31' };
  return (await store.paymentReport.page(everyDay, 1, 0)).total;
}
