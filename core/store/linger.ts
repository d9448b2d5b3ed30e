/**
 * A write that may wait a little for company in a group commit (issue 17): a callback's lease or finish,
 * never a payer's checkout. It commits at most `lingerMs` after it was asked for, or at once when `upTo`
 * writes are waiting, or with the next write that may not wait, whichever comes first.
 */
export interface Linger {
  lingerMs: number;
  upTo: number;
}

/**
 * Deliveries are answered one by one, so without a wait each lease and finish would commit alone; 2 ms,
 * or the 32 deliveries a process runs at once, gathered most of a wave in measurements (decision 176).
 */
export const DELIVERY_LINGER: Linger = { lingerMs: 2, upTo: 32 };

/**
 * A batch's ledger appends (one job per sink, each its own queue) reach a worker one by one from Redis: a
 * short wait lets the sinks of a batch share a commit there too. Embedded, they are asked in one turn.
 */
export const LEDGER_LINGER: Linger = { lingerMs: 2, upTo: 3 };
