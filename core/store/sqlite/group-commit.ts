import Database from 'better-sqlite3';
import type { Db } from './db.ts';
import type { Linger } from '../linger.ts';

/**
 * At most this many writes, and this much weight (a webhook batch weighs its records, any other write 1),
 * share a commit, so one group never holds the write lock for long. A write heavier than the bound still
 * commits, alone.
 */
const MAX_GROUP = 256;
const MAX_GROUP_WEIGHT = 5000;

/** How soon a group whose write lock another connection holds looks again. */
const LOCK_RETRY_MS = 1;

/** Runs `work` in the connection's next group commit; settles after that commit. */
export type InGroup = <T>(work: () => T, linger?: Linger, weight?: number) => Promise<T>;

interface Pending {
  work: () => unknown;
  weight: number;
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
  const queue: Pending[] = [];
  const lock = writeLock(db);
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
    if (queue.length === 0) return;
    const take = groupSize();
    try {
      if (!lock.begin()) {
        // Another connection (a worker process on the same file) holds the write lock: look again shortly,
        // with this thread free meanwhile, and whatever is asked for until then joins this group.
        timer = setTimeout(flush, LOCK_RETRY_MS);
        return;
      }
    } catch (error) {
      // BEGIN itself failed (an I/O error, or the lock still held after the busy timeout): nothing stored.
      // The writes queued behind this group try on their own: the lock may be free by their turn.
      const group = queue.splice(0, take);
      if (queue.length > 0) flushSoon();
      for (const item of group) item.reject(error);
      return;
    }
    const group = queue.splice(0, take);
    if (queue.length > 0) flushSoon();
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      for (const item of group) {
        try {
          // Inside the open transaction a better-sqlite3 transaction is a savepoint: its failure undoes
          // only its own writes.
          outcomes.push({ ok: true, value: db.transaction(item.work)() });
        } catch (error) {
          // SQLite undoes the whole transaction after some errors (disk full, I/O): none of the group stands.
          if (!db.inTransaction) throw error;
          outcomes.push({ ok: false, error });
        }
      }
      lock.commit();
    } catch (error) {
      // The commit itself failed (disk full): nothing of the group is stored.
      lock.rollback();
      for (const item of group) item.reject(error);
      return;
    }
    group.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }

  /** How many queued writes the next group takes: the first always, then while both bounds hold. */
  function groupSize(): number {
    let weight = queue[0]!.weight;
    let take = 1;
    while (take < queue.length && take < MAX_GROUP && weight + queue[take]!.weight <= MAX_GROUP_WEIGHT) {
      weight += queue[take]!.weight;
      take += 1;
    }
    return take;
  }

  return <T>(work: () => T, linger?: Linger, weight = 1): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({ work, weight, resolve: resolve as (value: unknown) => void, reject });
      if (immediate) return;
      if (!linger || queue.length >= linger.upTo) flushSoon();
      else timer ??= setTimeout(flush, linger.lingerMs);
    });
}

/**
 * BEGIN IMMEDIATE without sleeping (issue 17): SQLite's busy handler sleeps the whole thread, in steps of up
 * to 100 ms, while another process (a second worker on the same file) holds the write lock, so a worker that
 * wanted to write could neither take the jobs Redis offered it nor notice the lock come free. `begin()` asks
 * once, with no busy wait, and says whether it got the lock; the caller waits on a timer instead. After the
 * connection's own busy timeout of such waiting it fails with SQLITE_BUSY, as the busy handler would have
 * (answered 503: decision 226); it used to wait that long again the blocking way, and the web process
 * answered nobody meanwhile.
 */
function writeLock(db: Db) {
  const busyTimeoutMs = db.pragma('busy_timeout', { simple: true }) as number;
  // Run, not prepared: SQLite applies a PRAGMA when it compiles it, so a prepared one would not re-apply.
  const noWait = () => db.exec('PRAGMA busy_timeout = 0');
  const wait = () => db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  let busySince: number | undefined;
  return {
    begin(): boolean {
      if (busySince !== undefined && Date.now() - busySince >= busyTimeoutMs) {
        busySince = undefined;
        throw new Database.SqliteError(`database is locked (waited ${busyTimeoutMs} ms)`, 'SQLITE_BUSY');
      }
      noWait();
      try {
        begin.run();
        busySince = undefined;
        return true;
      } catch (error) {
        // SQLITE_BUSY, or one of its extended codes (SQLITE_BUSY_RECOVERY while another opens the WAL).
        if (!String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY')) throw error;
        busySince ??= Date.now();
        return false;
      } finally {
        wait();
      }
    },
    commit: () => void commit.run(),
    rollback(): void {
      if (db.inTransaction) rollback.run();
    },
  };
}
