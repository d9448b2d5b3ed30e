import type { Db } from './db.ts';
import type { Linger } from '../linger.ts';

/** At most this many writes share a commit, so one group never holds the write lock for long. */
const MAX_GROUP = 256;

/** Runs `work` in the connection's next group commit; settles after that commit. */
export type InGroup = <T>(work: () => T, linger?: Linger) => Promise<T>;

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit (issue 17): writes asked for in the same turn of the event loop run in one IMMEDIATE
 * transaction, each in a savepoint of its own, so one fsync serves them all and one write that throws
 * rolls back alone. Each promise settles only after the commit that holds its write: a caller that
 * answers 2xx on it answers for durably committed data. A write given a `Linger` may wait a few
 * milliseconds for others (deliveries answered one by one); one without never waits beyond its turn.
 */
export function groupCommitter(db: Db): InGroup {
  // One group per connection: the repositories of a store share it, so a claim and a checkout of the
  // same turn share a commit too.
  let committer = committers.get(db);
  if (!committer) {
    committer = newCommitter(db);
    committers.set(db, committer);
  }
  return committer;
}

const committers = new WeakMap<Db, InGroup>();

function newCommitter(db: Db): InGroup {
  let queue: Pending[] = [];
  // A flush at the end of this turn is scheduled; or a lingering one, by timer.
  let immediate = false;
  let timer: NodeJS.Timeout | undefined;

  function flushSoon(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (immediate) return;
    immediate = true;
    // After the I/O phase: every request parsed in this turn joins the group before it commits.
    setImmediate(flush);
  }

  function flush(): void {
    immediate = false;
    if (timer) clearTimeout(timer);
    timer = undefined;
    const group = queue.slice(0, MAX_GROUP);
    queue = queue.slice(MAX_GROUP);
    if (queue.length > 0) flushSoon();
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      db.transaction(() => {
        for (const item of group) {
          try {
            // A nested better-sqlite3 transaction is a savepoint: its failure undoes only its own writes.
            outcomes.push({ ok: true, value: db.transaction(item.work)() });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      }).immediate();
    } catch (error) {
      // The commit itself failed (disk full, lock timeout): nothing of the group is stored.
      for (const item of group) item.reject(error);
      return;
    }
    group.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }

  return <T>(work: () => T, linger?: Linger): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (immediate) return;
      if (!linger || queue.length >= linger.upTo) flushSoon();
      else timer ??= setTimeout(flush, linger.lingerMs);
    });
}
