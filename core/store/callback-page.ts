/**
 * The dashboard's callbacks page from the parts each engine reads through an index (decision 239): the
 * failing callbacks (attempted and still queued, or dead, or gone) come first, newest first, then the rest,
 * newest first. Each part is read at its own offset, so a page never sorts the agency's whole history.
 */
import type { CallbackState } from './dashboard-reads.ts';

/** An agency's callbacks counted by state and by whether an attempt was made. */
export interface AgencyCallbackCount {
  state: CallbackState;
  attempted: boolean | number;
  n: number;
}

/** The page's filter: every callback, the failing ones, or one state. */
export type CallbackFilter = CallbackState | 'failing' | undefined;

const isFailing = (c: Pick<AgencyCallbackCount, 'state' | 'attempted'>) =>
  c.state === 'dead' || c.state === 'gone' || (c.state === 'queued' && Boolean(c.attempted));

/** The tab counts and the filter's total, from the agency's counts. */
export function callbackTotals(
  counts: readonly AgencyCallbackCount[],
  filter: CallbackFilter,
): { byState: Record<string, number>; total: number; failingOfFilter: number } {
  const byState: Record<string, number> = { failing: 0 };
  let total = 0;
  let failingOfFilter = 0;
  for (const c of counts) {
    const n = Number(c.n);
    if (n === 0) continue;
    byState[c.state] = (byState[c.state] ?? 0) + n;
    const failing = isFailing(c);
    if (failing) byState.failing! += n;
    const matches = filter === undefined || (filter === 'failing' ? failing : c.state === filter);
    if (!matches) continue;
    total += n;
    if (failing) failingOfFilter += n;
  }
  return { byState, total, failingOfFilter };
}

/** A read of one part of the page: at most `limit` rows from `offset`, newest first. */
export interface PartRead {
  limit: number;
  offset: number;
}

/**
 * Which reads make one page: the failing part from `offset`, then where it ends the rest: `newest` (not
 * failing, from the agency's index range, for every callback or the delivered ones: most of its history) or
 * `inState` (the rest of the 'queued' filter, not attempted yet, or the superseded ones: few, from the state
 * index, which reads them without the agency's delivered history). The counts come from the same snapshot
 * as the rows, so the failing part holds exactly `failingOfFilter` rows and the split is known before
 * reading.
 */
export function callbackPagePlan(
  filter: CallbackFilter,
  failingOfFilter: number,
  limit: number,
  offset: number,
): { failing?: PartRead; newest?: PartRead; inState?: PartRead } {
  const failingTaken = Math.max(0, Math.min(limit, failingOfFilter - offset));
  const plan: { failing?: PartRead; newest?: PartRead; inState?: PartRead } = {};
  if (failingTaken > 0) plan.failing = { limit: failingTaken, offset };
  const rest = { limit: limit - failingTaken, offset: Math.max(0, offset - failingOfFilter) };
  // Dead, gone and 'failing' have no rest.
  if (rest.limit <= 0 || filter === 'failing' || filter === 'dead' || filter === 'gone') return plan;
  if (filter === 'queued' || filter === 'superseded') plan.inState = rest;
  else plan.newest = rest;
  return plan;
}
