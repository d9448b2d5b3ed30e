import type { PaymentRow } from '../store/index.ts';

/** Result codes meaning "not known yet" (spec 2.4): no answer, or the bank's pending codes. */
export const PENDING_CODES: readonly string[] = ['', '09', '76', '99'];

/** amil's own code for a payment that stayed pending past PENDING_EXPIRY_MS (docs/checkout.md). */
export const EXPIRED_CODE = 'XP';

/** amil's own code for an order nobody took to the bank within UNPAID_ORDER_EXPIRY_MS (docs/checkout.md). */
export const ABANDONED_CODE = 'XA';

/** Spec 2.4: `00` is success; empty, 09, 76 and 99 are pending; every other code is failed. */
export function statusOfCode(code: string): PaymentRow['status'] {
  if (code === '00') return 'success';
  return PENDING_CODES.includes(code) ? 'pending' : 'failed';
}
