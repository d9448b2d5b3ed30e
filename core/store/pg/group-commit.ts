/**
 * Group commit on PostgreSQL (issue 17, decision 177): the writes asked for while the previous groups were
 * committing run together in one transaction, so one commit (one WAL flush, one BEGIN and COMMIT) serves
 * them all. Each caller is answered only after the commit that holds its write.
 */
import type { Linger } from '../linger.ts';
import { isStoreOutage } from '../outage.ts';
import type { PgDb, Queryable } from './pool.ts';

/** At most this many writes share a transaction, so one group never holds its locks for long. */
const MAX_GROUP = 64;

/** Groups committing at once (each on its own connection); the rest wait and form the next group. */
const IN_FLIGHT = 3;

/** Runs `work` in the pool's next group; settles after that group's commit. `work` may run twice. */
export type PgInGroup = <T>(work: (tx: Queryable) => Promise<T>, linger?: Linger) => Promise<T>;

interface Pending {
  work: (tx: Queryable) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const committers = new WeakMap<PgDb, PgInGroup>();

/** The group committer of a pool (one per pool: the repositories of a store share it). */
export function pgGroupCommitter(db: PgDb): PgInGroup {
  let committer = committers.get(db);
  if (!committer) {
    committer = newCommitter(db);
    committers.set(db, committer);
  }
  return committer;
}

function newCommitter(db: PgDb): PgInGroup {
  const queue: Pending[] = [];
  let inFlight = 0;
  // The waiting writes may start (one of them may not wait, or their linger is over).
  let due = false;
  let turnScheduled = false;
  let timer: NodeJS.Timeout | undefined;

  function pump(): void {
    while (due && queue.length > 0 && inFlight < IN_FLIGHT) {
      const group = queue.splice(0, MAX_GROUP);
      if (queue.length === 0) {
        due = false;
        if (timer) clearTimeout(timer);
        timer = undefined;
      }
      void run(group);
    }
  }

  function makeDue(): void {
    timer = undefined;
    due = true;
    pump();
  }

  async function run(group: Pending[]): Promise<void> {
    inFlight += 1;
    try {
      // No savepoints (each would cost two round trips): the group runs whole, and only if one of its
      // writes fails are they run again each in a transaction of its own, so that one fails alone.
      const values = await db.transaction(async (tx) => {
        const out: unknown[] = [];
        for (const item of group) out.push(await item.work(tx));
        return out;
      });
      group.forEach((item, i) => item.resolve(values[i]));
    } catch (error) {
      // An outage (a lock not had within the lock wait, a lost server) is no one write's fault: run again
      // one by one, every write would meet it again, each waiting out the lock wait of its own first.
      if (group.length === 1 || isStoreOutage(error)) for (const item of group) item.reject(error);
      else await Promise.all(group.map((item) => db.transaction(item.work).then(item.resolve, item.reject)));
    } finally {
      inFlight -= 1;
      // Writes that arrived meanwhile waited for a connection: they go now.
      if (queue.length > 0) due = true;
      pump();
    }
  }

  return <T>(work: (tx: Queryable) => Promise<T>, linger?: Linger): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (due) return pump();
      if (!linger || queue.length >= linger.upTo) {
        if (timer) clearTimeout(timer);
        timer = undefined;
        if (turnScheduled) return;
        turnScheduled = true;
        // After the I/O phase: every request parsed in this turn joins the group.
        setImmediate(() => {
          turnScheduled = false;
          makeDue();
        });
      } else timer ??= setTimeout(makeDue, linger.lingerMs);
    });
}
