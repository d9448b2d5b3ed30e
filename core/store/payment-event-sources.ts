/**
 * Payment event sources that are not an acquirer's answer, as an SQL list both engines read the same way:
 * the order's own creation ('checkout') and its expiry unpaid ('abandoned', code XA). The reconciliation
 * counts only the others. Engine-neutral, so neither engine's files import the other's.
 */
export const NOT_ACQUIRER_SOURCES = `('checkout', 'abandoned')`;
