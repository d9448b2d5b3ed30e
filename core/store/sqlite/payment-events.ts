/**
 * Payment event sources that are not an acquirer's answer, as an SQL list: the order's own creation
 * ('checkout') and its expiry unpaid ('abandoned', code XA). The reconciliation counts only the others.
 */
export const NOT_ACQUIRER_SOURCES = `('checkout', 'abandoned')`;
