/**
 * How far this machine's clock is from the database's (decision 259). On several machines, each one's
 * clock stamps what it writes and decides when a lease another machine took has ended (the outbox, the
 * callbacks, the receipts): two clocks seconds apart make a worker take rows another still holds, or make
 * today's payments another day's. SQLite lives on the machine itself, so only PostgreSQL is asked.
 */
import type { Store } from './store/index.ts';

/** Beyond this, readiness fails and the workers log an error: well inside the shortest lease (5 s past a callback's timeout). */
export const CLOCK_OFFSET_LIMIT_MS = 1000;

export interface ClockOffset {
  /** This machine's clock minus the database's: positive when this machine is ahead. */
  offsetMs: number;
  /** Half the round trip: how far the true offset may be from `offsetMs`. */
  uncertaintyMs: number;
}

/**
 * The machine's clock (Date.now, what stamps writes in production) against the database server's
 * `clock_timestamp()`, read halfway through the round trip; undefined on SQLite (one machine, one clock).
 */
export async function measureClockOffset(store: Store): Promise<ClockOffset | undefined> {
  const sent = Date.now();
  const serverMs = await store.ops.serverClockMs();
  const received = Date.now();
  if (serverMs === undefined) return undefined;
  return { offsetMs: (sent + received) / 2 - serverMs, uncertaintyMs: (received - sent) / 2 };
}

/** What is wrong with the offset, for ops; undefined while it is within the limit. */
export function clockOffsetProblem(offset: ClockOffset | undefined): string | undefined {
  if (!offset || Math.abs(offset.offsetMs) - offset.uncertaintyMs <= CLOCK_OFFSET_LIMIT_MS) return undefined;
  const seconds = (Math.abs(offset.offsetMs) / 1000).toFixed(1);
  return (
    `this machine's clock is ${seconds} s ${offset.offsetMs > 0 ? 'ahead of' : 'behind'} the database's ` +
    `(at most ${CLOCK_OFFSET_LIMIT_MS / 1000} s allowed): keep every machine's clock synchronised (NTP, chrony)`
  );
}
