/**
 * Streams read by keyset, on both engines: every row of a report or an export in its order, a chunk at a
 * time, each chunk one statement of its own that starts after the last row read. Nothing is held between
 * chunks (no connection, transaction or snapshot), so a reader that stops reading, a report client that
 * never reads its response, holds nothing another request needs (decision 227).
 */

/** A payment's place in report order: created_at, then order number. */
export interface PaymentKey {
  createdAt: string;
  orderNo: string;
}

/**
 * Report order of payments. Both are ASCII (instants as ISO strings to the millisecond, as every writer
 * stores them), so `<` agrees with SQLite's BINARY collation and PostgreSQL's C collation.
 */
export const paymentBefore = (a: PaymentKey, b: PaymentKey): boolean =>
  a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.orderNo < b.orderNo);

/** A payer's history order: newest first, then by order number (decision 247). */
export const payerBefore = (a: PaymentKey, b: PaymentKey): boolean =>
  a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.orderNo < b.orderNo);

/** A zakat report row's place in report order: business day, posting, then agency. */
export interface ZakatKey {
  businessDate: string;
  postingId: number;
  sink: string;
}

/** Report order of zakat rows (days as `YYYY-MM-DD`, agency codes ASCII, so `<` agrees with both engines). */
export const zakatBefore = (a: ZakatKey, b: ZakatKey): boolean =>
  a.businessDate < b.businessDate ||
  (a.businessDate === b.businessDate &&
    (a.postingId < b.postingId || (a.postingId === b.postingId && a.sink < b.sink)));

/**
 * Every row `read` gives, `chunk` at a time: `read(after, limit)` returns the rows after `after` (the
 * last row of the chunk before; undefined for the first), in order, at most `limit`.
 */
export async function* seekRows<R>(
  read: (after: R | undefined, limit: number) => R[] | Promise<R[]>,
  chunk: number,
): AsyncGenerator<R> {
  let after: R | undefined;
  for (;;) {
    const rows = await read(after, chunk);
    yield* rows;
    if (rows.length < chunk) return;
    after = rows.at(-1);
  }
}

/**
 * Merges streams each already in `before` order into one. A report token covers a handful of agencies,
 * each read through its own index range, so the smallest head is found by a plain scan and nothing is
 * sorted (one query over all of them would sort every remaining row for each chunk).
 */
export async function* mergedInOrder<R>(
  streams: AsyncIterator<R>[],
  before: (a: R, b: R) => boolean,
): AsyncGenerator<R> {
  try {
    const heads = await Promise.all(streams.map((stream) => stream.next()));
    for (;;) {
      let min = -1;
      heads.forEach((head, i) => {
        const current = heads[min];
        if (!head.done && (!current || current.done || before(head.value, current.value))) min = i;
      });
      const head = heads[min];
      if (!head || head.done) return;
      yield head.value;
      heads[min] = await streams[min]!.next();
    }
  } finally {
    // A reader that stopped early ends every stream it was merging.
    await Promise.all(streams.map(async (stream) => stream.return?.()));
  }
}
