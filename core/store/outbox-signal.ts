/**
 * "This process committed outbox rows that are due now" (decision 220): the stores announce it after the
 * commit, and the runtimes of the process listen, so a job starts at once instead of at the next look at
 * the outbox (up to a poll interval later). A hint, never the only way work is found: the polls stay, so a
 * missed or spurious announcement costs at most a wait or one empty look.
 *
 * One signal per process, not per store: a process runs one store (tests open several, and then a look
 * woken by another store's write finds nothing).
 */
type Listener = (queues: ReadonlySet<string>) => void;

const listeners = new Set<Listener>();
let announced = new Set<string>();
let scheduled = false;

function tell(): void {
  scheduled = false;
  const queues = announced;
  announced = new Set();
  for (const listener of listeners) listener(queues);
}

export const outboxSignal = {
  /**
   * Rows of `queue` due now were committed. The listeners hear of it once per turn of the event loop, after
   * the code that wrote them (a SQLite transaction is synchronous, so it has committed by then).
   */
  announce(queue: string): void {
    announced.add(queue);
    if (scheduled) return;
    scheduled = true;
    setImmediate(tell);
  },
  /** Calls `listener` with the queues announced; returns what stops it. */
  listen(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
