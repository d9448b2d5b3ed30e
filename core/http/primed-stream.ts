import { Readable } from 'node:stream';

/**
 * A response body whose first reads of the store have run before it is answered: the 200 and its headers
 * go only once the first `pieces` chunks (or the end) are in hand, so a store that fails at once (an outage,
 * 503) is answered as such, not as a 200 whose body is cut after its first bytes (decision 277). A failure
 * later in a long stream can only cut it.
 */
export async function primedStream(chunks: AsyncGenerator<string>, pieces: number): Promise<Readable> {
  const head: string[] = [];
  for (let i = 0; i < pieces; i += 1) {
    const next = await chunks.next();
    if (next.done) return Readable.from(head);
    head.push(next.value);
  }
  return Readable.from(
    (async function* () {
      yield* head;
      yield* chunks;
    })(),
  );
}

/**
 * The rows with their first read already done, for a body written as rows come (the Excel export): as with
 * `primedStream`, a store failing at once fails here, before any header of the file is set.
 */
export async function primedRows<T>(rows: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const iterator = rows[Symbol.asyncIterator]();
  const first = await iterator.next();
  return (async function* () {
    if (first.done) return;
    yield first.value;
    // Delegated, so a consumer that stops early closes the store's read (its return() reaches it).
    yield* { [Symbol.asyncIterator]: () => iterator };
  })();
}
