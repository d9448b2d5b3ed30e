/** A checkout order as the store tests make them: LZS, RM 10.00 fitrah, at a fixed instant. */
import type { NewOrder } from '../../core/store/index.ts';

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
