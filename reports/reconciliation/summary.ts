import { createHash } from 'node:crypto';
import type { ReconItem, ReconMovement, ReconSnapshot, ReconStatus } from '../../core/store/index.ts';

/** A control total: how many, and their sum in sen. */
export interface Total {
  count: number;
  sumSen: number;
}

/** One line of a breakdown (a zakat type, a state, a channel): all items, and each status apart. */
export interface BreakdownLine {
  key: string;
  all: Total;
  success: Total;
  pending: Total;
  failed: Total;
}

/** Pending opening + movements = pending closing, with the check's result. */
export interface PendingRoll {
  opening: Total;
  /** Versions received pending whose record was not pending before (new, or arrived pending late). */
  added: Total;
  /** Versions received success whose record was pending before (within the day too). */
  succeeded: Total;
  /** Versions received failed whose record was pending before. */
  failed: Total;
  /** Stayed pending while their amount changed (the change in sum only). */
  amountChanges: Total;
  closing: Total;
  balances: boolean;
}

/** Everything the Summary sheet shows, read in one pass before the workbook is written. */
export interface DaySummary {
  sink: string;
  day: string;
  /** The instant the day is read as of (the run's as-of time). */
  asOf: string;
  /** SHA-256 of every record the workbook shows: equal fingerprints, the same figures and rows. */
  fingerprint: string;
  runId: string;
  inputs: {
    transactions: number;
    flagged: number;
    anomalies: number;
    movements: number;
    adjustments: number;
    pendingClosing: number;
  };
  byStatus: Record<ReconStatus, Total>;
  /** Add charges (checkout's payer fees, on top of the amounts) by status, in sen. */
  addChargesSen: Record<ReconStatus, number>;
  byType: BreakdownLine[];
  byState: BreakdownLine[];
  byChannel: BreakdownLine[];
  pending: PendingRoll;
  /** Changes during the day to earlier days' records: the change to their collected (success) total. */
  adjustments: { count: number; collectedDeltaSen: number };
}

export const STATUSES: readonly ReconStatus[] = ['success', 'pending', 'failed'];

const zero = (): Total => ({ count: 0, sumSen: 0 });
const add = (total: Total, sen: number, count = 1): void => {
  total.count += count;
  total.sumSen += sen;
};

/** The canonical zakat type: bank types as normalised; a checkout category like `zakat-fitrah` by name. */
export function canonicalType(item: Pick<ReconItem, 'channel' | 'typeRaw'>): string {
  const raw = item.typeRaw;
  if (raw === null) return '(none)';
  const name = item.channel === 'bank' ? raw : raw.replace(/-/g, '_');
  return name === 'zakat_fitrah' ? 'fitrah' : name;
}

/** Reads the whole day: control totals, the pending roll, and the fingerprint of all the content. */
export async function summarise(snapshot: ReconSnapshot): Promise<DaySummary> {
  const builder = summaryBuilder(snapshot);
  for await (const item of snapshot.transactions()) builder.transaction(item);
  return builder.finish();
}

/**
 * The summary built along the way: the workbook hands it each transaction as it writes the row (one read
 * of the day's transactions, not two), then `finish` reads the pending roll and the anomalies.
 */
export function summaryBuilder(snapshot: ReconSnapshot): {
  transaction(item: ReconItem): void;
  finish(): Promise<DaySummary>;
} {
  const hash = createHash('sha256');
  const feed = (section: string, value: unknown) => hash.update(`${section}\t${JSON.stringify(value)}\n`);
  // The as-of time is not content: two runs that read the same records share a fingerprint.
  feed('day', [snapshot.sink, snapshot.day]);

  const byStatus: Record<ReconStatus, Total> = { success: zero(), pending: zero(), failed: zero() };
  const addChargesSen: Record<ReconStatus, number> = { success: 0, pending: 0, failed: 0 };
  const breakdowns = {
    type: new Map<string, BreakdownLine>(),
    state: new Map(),
    channel: new Map(),
  } as Record<'type' | 'state' | 'channel', Map<string, BreakdownLine>>;
  const count = (kind: 'type' | 'state' | 'channel', key: string, item: ReconItem) => {
    let line = breakdowns[kind].get(key);
    if (!line) {
      line = { key, all: zero(), success: zero(), pending: zero(), failed: zero() };
      breakdowns[kind].set(key, line);
    }
    add(line.all, item.amountSen);
    add(line[item.status], item.amountSen);
  };

  let transactions = 0;
  let flagged = 0;
  const transaction = (item: ReconItem) => {
    feed('t', item);
    transactions += 1;
    if (item.exceptions !== '[]') flagged += 1;
    add(byStatus[item.status], item.amountSen);
    addChargesSen[item.status] += item.addChargeSen;
    count('type', canonicalType(item), item);
    count('state', item.state ?? '(none)', item);
    count('channel', item.channel, item);
  };

  const finish = async (): Promise<DaySummary> => {
    const roll: PendingRoll = {
      opening: zero(),
      added: zero(),
      succeeded: zero(),
      failed: zero(),
      amountChanges: zero(),
      closing: zero(),
      balances: false,
    };
    for await (const item of snapshot.pending('opening')) add(roll.opening, item.amountSen);
    // Every version received counts (issue 15): the roll shows each move, and "changes received" is
    // what the bank sent. A record of an earlier day is one adjustment however many versions it got; its
    // versions' changes to collected add up to its change over the day.
    let movements = 0;
    const adjustments = { count: 0, collectedDeltaSen: 0 };
    let lastAdjusted = '';
    for await (const move of snapshot.versions()) {
      feed('m', move);
      movements += 1;
      rollMovement(roll, move);
      if (move.businessDate < snapshot.day) {
        const record = `${move.channel}\t${move.orderNo}`;
        if (record !== lastAdjusted) adjustments.count += 1;
        lastAdjusted = record;
        adjustments.collectedDeltaSen += collectedDelta(move);
      }
    }
    for await (const item of snapshot.pending('closing')) {
      feed('p', item);
      add(roll.closing, item.amountSen);
    }
    const anomalies = await snapshot.anomalies();
    for (const anomaly of anomalies) feed('a', anomaly);

    const expected = {
      count:
        roll.opening.count +
        roll.added.count -
        roll.succeeded.count -
        roll.failed.count +
        roll.amountChanges.count,
      sumSen:
        roll.opening.sumSen +
        roll.added.sumSen -
        roll.succeeded.sumSen -
        roll.failed.sumSen +
        roll.amountChanges.sumSen,
    };
    roll.balances = expected.count === roll.closing.count && expected.sumSen === roll.closing.sumSen;

    const fingerprint = hash.digest('hex');
    const sorted = (map: Map<string, BreakdownLine>) =>
      [...map.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
    return {
      sink: snapshot.sink,
      day: snapshot.day,
      asOf: snapshot.asOf,
      fingerprint,
      runId: `${snapshot.sink.replace('#', '')}-${snapshot.day.replace(/-/g, '')}-${fingerprint.slice(0, 10)}`,
      inputs: {
        transactions,
        flagged,
        anomalies: anomalies.length,
        movements,
        adjustments: adjustments.count,
        pendingClosing: roll.closing.count,
      },
      byStatus,
      addChargesSen,
      byType: sorted(breakdowns.type),
      byState: sorted(breakdowns.state),
      byChannel: sorted(breakdowns.channel),
      pending: roll,
      adjustments,
    };
  };
  return { transaction, finish };
}

/** A movement's part in the pending roll. */
function rollMovement(roll: PendingRoll, move: ReconMovement): void {
  const wasPending = move.beforeStatus === 'pending';
  const isPending = move.status === 'pending';
  const before = move.beforeAmountSen ?? 0;
  if (!wasPending && isPending) add(roll.added, move.amountSen);
  else if (wasPending && move.status === 'success') add(roll.succeeded, before);
  else if (wasPending && move.status === 'failed') add(roll.failed, before);
  else if (wasPending && isPending && before !== move.amountSen)
    add(roll.amountChanges, move.amountSen - before, 0);
}

/** How a change moves the collected (success) total of the day the record belongs to. */
export function collectedDelta(move: ReconMovement): number {
  const before = move.beforeStatus === 'success' ? (move.beforeAmountSen ?? 0) : 0;
  const after = move.status === 'success' ? move.amountSen : 0;
  return after - before;
}

/** The day's headline totals in sen, kept with the run: what the e-mail body and the run listing show. */
export interface Headline {
  success: Total;
  pending: Total;
  failed: Total;
  pendingBalances: boolean;
  adjustments: DaySummary['adjustments'];
}

export function headline(summary: DaySummary): Headline {
  return {
    success: summary.byStatus.success,
    pending: summary.byStatus.pending,
    failed: summary.byStatus.failed,
    pendingBalances: summary.pending.balances,
    adjustments: summary.adjustments,
  };
}
