/**
 * Micro-batches on PostgreSQL (issue 17, decision 195): calls of one kind that arrive within a few
 * milliseconds of each other (callback leases, callback finishes) go to the server as one statement, so a
 * batch costs one round trip and one commit instead of several per call. Where group-commit.ts runs each
 * write's own statements in one shared transaction, a micro-batch is one statement over arrays of inputs.
 */
import type { Linger } from '../linger.ts';

/** Runs a batch as one statement: one answer per item, in order. Throws when the statement fails. */
export type BatchRunner<I, O> = (items: readonly I[]) => Promise<O[]>;

export interface MicroBatchOptions {
  /** How long the first item may wait for others, and how many make a batch go at once. */
  linger: Linger;
  /** At most this many items in one statement (its arrays, and how long it holds its row locks). */
  maxBatch: number;
  /** Batches running at once (each on its own connection); the items arriving meanwhile form the next. */
  inFlight: number;
}

interface Pending<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Batches the calls of `run`: an item waits at most `linger.lingerMs` (or until `linger.upTo` are waiting),
 * or, while `inFlight` batches are running, until one of them is done. Each caller is answered when its
 * batch's statement has returned (committed). When a batch of several fails, each item runs again alone,
 * so only a failing item fails.
 */
export function microBatcher<I, O>(
  run: BatchRunner<I, O>,
  options: MicroBatchOptions,
): (item: I) => Promise<O> {
  const queue: Pending<I, O>[] = [];
  let running = 0;
  let timer: NodeJS.Timeout | undefined;

  function start(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    while (queue.length > 0 && running < options.inFlight) void runBatch(queue.splice(0, options.maxBatch));
  }

  async function runBatch(batch: Pending<I, O>[]): Promise<void> {
    running += 1;
    try {
      const answers = await run(batch.map((p) => p.item));
      batch.forEach((p, i) => p.resolve(answers[i]!));
    } catch (error) {
      if (batch.length === 1) batch[0]!.reject(error);
      else
        await Promise.all(
          batch.map((p) => run([p.item]).then((answers) => p.resolve(answers[0]!), p.reject)),
        );
    } finally {
      running -= 1;
      // The items that arrived while every slot was taken have waited already: they go now.
      if (queue.length > 0) start();
    }
  }

  return (item: I) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (running >= options.inFlight) return;
      if (queue.length >= options.linger.upTo) start();
      else timer ??= setTimeout(start, options.linger.lingerMs);
    });
}
