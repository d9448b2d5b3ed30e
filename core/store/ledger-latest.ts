/**
 * "This ledger entry `l` is its posting's latest version in its agency's ledger", for the reads of both
 * engines. SQLite walks either form through the primary key; PostgreSQL's planner needs each in its place
 * (decision 229). Same rows; the plans differ:
 * - LATEST_IN_LEDGER, for counts and pages over a range of days: a scalar subquery, one primary-key
 *   lookup per entry of the days asked for. Written as NOT EXISTS, the planner joined the range with a
 *   hash of the whole ledger: a read of every entry ever made, for one day's count.
 * - NO_LATER_IN_LEDGER, for a stream's chunk (ORDER BY the day index, LIMIT): an anti-join the planner
 *   runs as a nested loop down the day index, stopping at the limit. The scalar form there made it read
 *   and sort the rest of the range for each chunk.
 */
export const LATEST_IN_LEDGER = `l.version = (SELECT max(l2.version) FROM ledger_entries l2
  WHERE l2.sink = l.sink AND l2.posting_id = l.posting_id)`;
export const NO_LATER_IN_LEDGER = `NOT EXISTS (SELECT 1 FROM ledger_entries l2
  WHERE l2.sink = l.sink AND l2.posting_id = l.posting_id AND l2.version > l.version)`;
