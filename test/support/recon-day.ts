import type { BankTransaction } from '../../schemas/index.ts';
import { statusOfCode } from '../../core/payments/status.ts';

/**
 * A generated business day with known truth, for the reconciliation tests: bank batches (with duplicates,
 * pending that settles, fitrah mismatches, live-test entries, late updates of the previous day, a
 * conflicting resend, versions after the as-of time) and checkout payments. The truth is computed here
 * from the plan alone, by the plain rules of the workbook, never from the code under test.
 */

export const DAY = '2026-11-20';
export const PREV = '2026-11-19';
/** The run reads the day as of 00:30 the next morning (KL). */
export const AS_OF = new Date('2026-11-21T00:30:00+08:00');
const DAY_START = new Date(`${DAY}T00:00:00+08:00`).getTime();

type Status = 'success' | 'pending' | 'failed';

export interface Version {
  at: number;
  status: Status;
}

export interface PlannedItem {
  id: string;
  sink: string;
  channel: 'bank' | 'fpx' | 'card' | 'ewallet';
  businessDate: string;
  amountSen: number;
  type: string;
  state: string;
  flagged: boolean;
  versions: Version[];
}

export interface Batch {
  at: Date;
  records: BankTransaction[];
}

export interface CheckoutPlan {
  orderNo: string;
  createdAt: Date;
  method: 'fpx' | 'card' | 'ewallet' | null;
  category: string;
  amountSen: number;
  /** Acquirer results in order, each with its time. */
  results: { at: Date; code: string }[];
}

export interface Total {
  count: number;
  sumSen: number;
}

export interface Truth {
  byStatus: Record<Status, Total>;
  byType: Record<string, Total>;
  byState: Record<string, Total>;
  byChannel: Record<string, Total>;
  opening: Total;
  closing: Total;
  /** The pending roll's movements: each version received during the day against the one before it. */
  added: Total;
  succeeded: Total;
  failed: Total;
  /** Versions received from the start of the day until as-of, of records of this day or earlier. */
  changesReceived: number;
  adjustments: { count: number; collectedDeltaSen: number };
  flagged: number;
  anomalies: number;
  transactions: number;
}

/** A small deterministic PRNG (mulberry32), so a failure reproduces. */
function prng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const SINK_OF: Record<string, string> = { BANKLZS: 'LZS', BANKPPZ: 'PPZ', BANK: '#test' };
const STATES: Record<string, string[]> = {
  BANKLZS: ['selangor'],
  BANKPPZ: ['kuala_lumpur', 'putrajaya', 'labuan'],
  BANK: ['selangor'],
};
const TYPES = [
  'zakat_pendapatan',
  'zakat_simpanan',
  'zakat_emas',
  'zakat_perniagaan',
  'fitrah',
  'zakat_fitrah',
];

const klIso = (ms: number) => new Date(ms + 8 * 3_600_000).toISOString().slice(0, 19) + '+08:00';
const ringgit = (sen: number) => (sen / 100).toFixed(2);

export interface GeneratedDay {
  batches: Batch[];
  checkout: CheckoutPlan[];
  items: PlannedItem[];
  conflicts: { sink: string; at: number }[];
}

/** Plans the day: `postings` new bank postings on DAY, plus the previous day's context. */
export function generateDay(postings: number, seed = 20261120): GeneratedDay {
  const random = prng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const items: PlannedItem[] = [];
  const records = new Map<string, BankTransaction>();
  const conflicts: { sink: string; at: number }[] = [];
  const byTime: { at: number; record: BankTransaction; version: Version }[] = [];
  let n = 0;

  const newPosting = (
    timeMs: number,
    receivedMs: number,
    status: Status,
    agency = pick(['BANKLZS', 'BANKPPZ', 'BANK']),
  ) => {
    n += 1;
    const orderno = `GEN${String(n).padStart(7, '0')}`;
    const rawType = agency === 'BANK' ? 'zakat_pendapatan' : pick(TYPES);
    const isFitrah = rawType === 'fitrah' || rawType === 'zakat_fitrah';
    const state = pick(STATES[agency]!);
    let amountSen = agency === 'BANK' ? 100 : 100 + Math.floor(random() * 500_000);
    const data: Record<string, string> = {
      zakat_type: rawType,
      zakat_state: state,
      zakat_year: '2026',
      zakat_ic_no: '850312105432',
    };
    let flagged = false;
    if (isFitrah) {
      const dependants = 1 + Math.floor(random() * 8);
      const rateSen = pick([500, 700, 260]);
      amountSen = rateSen * dependants;
      // One in eight fitrah records does not add up (FITRAH_MISMATCH).
      if (random() < 0.125) {
        amountSen += 700;
        flagged = true;
      }
      data.zakat_rate = ringgit(rateSen);
      data.zakat_dependant = String(dependants);
    }
    const record: BankTransaction = {
      agency,
      orderno,
      amount: amountSen / 100,
      name: `Payer ${n}`,
      email: `payer${n}@example.my`,
      time: klIso(timeMs),
      status,
      data,
    } as BankTransaction;
    records.set(orderno, record);
    const version: Version = { at: receivedMs, status };
    byTime.push({ at: receivedMs, record, version });
    items.push({
      id: orderno,
      sink: SINK_OF[agency]!,
      channel: 'bank',
      businessDate: klIso(timeMs).slice(0, 10),
      amountSen,
      type: rawType === 'zakat_fitrah' ? 'fitrah' : rawType,
      state,
      flagged,
      versions: [version],
    });
    return items[items.length - 1]!;
  };
  const update = (item: PlannedItem, status: Status, atMs: number) => {
    const record = { ...records.get(item.id)!, status, time: klIso(atMs) };
    records.set(item.id, record);
    const version: Version = { at: atMs, status };
    byTime.push({ at: atMs, record, version });
    item.versions.push(version);
  };

  // The previous day: postings, some left pending at its end; three of those settle on DAY (adjustments).
  const prevStart = DAY_START - 86_400_000;
  const prevPending: PlannedItem[] = [];
  for (let i = 0; i < 40; i += 1) {
    const t = prevStart + 3_600_000 + i * 1_500_000;
    const status: Status = i % 5 === 0 ? 'pending' : 'success';
    const item = newPosting(t, t + 60_000, status, i % 2 === 0 ? 'BANKLZS' : 'BANKPPZ');
    if (status === 'pending') prevPending.push(item);
  }
  // A posting of the previous day that arrives only on DAY (a late arrival).
  newPosting(prevStart + 86_000_000, DAY_START + 600_000, 'success', 'BANKLZS');

  // The day itself.
  const span = 86_400_000 - 120_000;
  const dayItems: PlannedItem[] = [];
  for (let i = 0; i < postings; i += 1) {
    const t = DAY_START + Math.floor((i / postings) * span);
    const status: Status = random() < 0.08 ? 'pending' : random() < 0.05 ? 'failed' : 'success';
    dayItems.push(newPosting(t, t + 30_000, status));
  }
  // Pending that settle later the same day, or after midnight but before as-of (00:30).
  for (const item of dayItems.filter((x) => x.versions[0]!.status === 'pending')) {
    const first = item.versions[0]!.at;
    const roll = random();
    if (roll < 0.4) update(item, 'success', Math.min(first + 3_600_000, DAY_START + 86_390_000));
    else if (roll < 0.55) update(item, 'failed', Math.min(first + 7_200_000, DAY_START + 86_390_000));
    else if (roll < 0.65)
      update(item, 'success', DAY_START + 86_400_000 + 600_000); // 00:10, before as-of
    else if (roll < 0.75) update(item, 'success', DAY_START + 86_400_000 + 3_600_000); // 01:00, after as-of
  }
  // The previous day's pending: most settle on DAY, one stays pending.
  prevPending.forEach((item, i) => {
    if (i === 0) return;
    update(item, i % 3 === 0 ? 'failed' : 'success', DAY_START + 7_200_000 + i * 60_000);
  });

  // Batches in received order: at most 500 records, never across midnight or the as-of time; each batch
  // is received at the time of its last record, which becomes its versions' time. Some batches also
  // resend, byte for byte, records the bank already sent (duplicates: no new version).
  byTime.sort((a, b) => a.at - b.at);
  const boundaries = [DAY_START, DAY_START + 86_400_000, AS_OF.getTime()];
  const crosses = (from: number, to: number) => boundaries.some((b) => from < b && to >= b);
  const batches: Batch[] = [];
  const latest = new Map<string, BankTransaction>();
  let group: typeof byTime = [];
  const flush = () => {
    if (group.length === 0) return;
    const at = group[group.length - 1]!.at;
    for (const entry of group) entry.version.at = at;
    const own = new Set(group.map((e) => e.record.orderno));
    const resend = [...latest.values()].filter((r) => !own.has(r.orderno)).slice(-15);
    for (const entry of group) latest.set(entry.record.orderno, entry.record);
    batches.push({
      at: new Date(at),
      records: [...group.map((e) => e.record), ...(at >= DAY_START ? resend : [])],
    });
    group = [];
  };
  for (const entry of byTime) {
    const first = group[0]?.at ?? entry.at;
    // At most 500 records or an hour of them, and never across midnight or the as-of time.
    if (group.length === 500 || entry.at - first > 3_600_000 || crosses(first, entry.at)) flush();
    group.push(entry);
  }
  flush();
  // A conflicting resend: a successful posting of the day resent as failed (kept as an anomaly).
  const conflictAt = DAY_START + 86_000_000;
  const victim = dayItems.find(
    (x) =>
      x.versions.length === 1 &&
      x.versions[0]!.status === 'success' &&
      x.sink === 'LZS' &&
      x.versions[0]!.at < conflictAt - 3_600_000,
  )!;
  const conflicting: BankTransaction = { ...records.get(victim.id)!, status: 'failed' };
  batches.push({ at: new Date(conflictAt), records: [conflicting] });
  conflicts.push({ sink: victim.sink, at: conflictAt });
  batches.sort((a, b) => a.at.getTime() - b.at.getTime());

  // Checkout payments of LZS.
  const checkout: CheckoutPlan[] = [];
  const methods = ['fpx', 'card', 'ewallet'] as const;
  const categories = ['zakat-pendapatan', 'zakat-fitrah', 'zakat-perniagaan'];
  const plan = (
    createdMs: number,
    results: [number, string][],
    method: CheckoutPlan['method'] = pick(methods),
  ) => {
    const orderNo = `CO${String(checkout.length + 1).padStart(6, '0')}`;
    const p: CheckoutPlan = {
      orderNo,
      createdAt: new Date(createdMs),
      method,
      category: pick(categories),
      amountSen: 100 + Math.floor(random() * 100_000),
      results: results.map(([at, code]) => ({ at: new Date(at), code })),
    };
    checkout.push(p);
    if (method !== null && results.length > 0) {
      items.push({
        id: orderNo,
        sink: 'LZS',
        channel: method,
        businessDate: klIso(createdMs).slice(0, 10),
        amountSen: p.amountSen,
        type: p.category.replace(/-/g, '_').replace('zakat_fitrah', 'fitrah'),
        state: '(none)',
        flagged: false,
        versions: results.map(([at, code]) => ({ at, status: statusOfCode(code) })),
      });
    }
  };
  for (let i = 0; i < 60; i += 1) {
    const created = DAY_START + 1_000_000 + i * 1_300_000;
    const roll = random();
    if (roll < 0.7) plan(created, [[created + 60_000, '00']]);
    else if (roll < 0.8) plan(created, [[created + 60_000, '51']]);
    else if (roll < 0.9)
      plan(created, [
        [created + 60_000, '09'],
        [created + 600_000, '00'],
      ]);
    else plan(created, [[created + 60_000, '09']]);
  }
  plan(DAY_START + 5_000_000, [], null); // an order never paid: not a transaction
  // Pending at the end of the previous day, succeeded on DAY: an adjustment, and in the opening.
  plan(DAY_START - 1_800_000, [
    [DAY_START - 1_700_000, '09'],
    [DAY_START + 900_000, '00'],
  ]);

  return { batches, checkout, items, conflicts };
}

const zero = (): Total => ({ count: 0, sumSen: 0 });
const add = (t: Total, sen: number) => {
  t.count += 1;
  t.sumSen += sen;
};

/** The state of an item as of an instant: its latest version received before it. */
function stateAt(item: PlannedItem, at: number): Status | undefined {
  let state: Status | undefined;
  for (const v of item.versions) if (v.at < at) state = v.status;
  return state;
}

/** What one sink's workbook must say, computed from the plan. */
export function truthOf(generated: GeneratedDay, sink: string): Truth {
  const asOf = AS_OF.getTime();
  const truth: Truth = {
    byStatus: { success: zero(), pending: zero(), failed: zero() },
    byType: {},
    byState: {},
    byChannel: {},
    opening: zero(),
    closing: zero(),
    added: zero(),
    succeeded: zero(),
    failed: zero(),
    changesReceived: 0,
    adjustments: { count: 0, collectedDeltaSen: 0 },
    flagged: 0,
    anomalies: generated.conflicts.filter((c) => c.sink === sink && c.at >= DAY_START && c.at < asOf).length,
    transactions: 0,
  };
  for (const item of generated.items.filter((x) => x.sink === sink)) {
    const now = stateAt(item, asOf);
    const before = stateAt(item, DAY_START);
    if (item.businessDate === DAY && now) {
      truth.transactions += 1;
      add(truth.byStatus[now], item.amountSen);
      for (const [map, key] of [
        [truth.byType, item.type],
        [truth.byState, item.state],
        [truth.byChannel, item.channel],
      ] as const) {
        map[key] ??= zero();
        add(map[key], item.amountSen);
      }
      if (item.flagged) truth.flagged += 1;
    }
    if (item.businessDate <= DAY && before === 'pending') add(truth.opening, item.amountSen);
    if (item.businessDate <= DAY && now === 'pending') add(truth.closing, item.amountSen);
    if (item.businessDate <= DAY) {
      item.versions.forEach((v, i) => {
        if (v.at < DAY_START || v.at >= asOf) return;
        truth.changesReceived += 1;
        const previous = item.versions[i - 1]?.status;
        if (previous !== 'pending' && v.status === 'pending') add(truth.added, item.amountSen);
        if (previous === 'pending' && v.status === 'success') add(truth.succeeded, item.amountSen);
        if (previous === 'pending' && v.status === 'failed') add(truth.failed, item.amountSen);
      });
    }
    const changedToday = item.versions.some((v) => v.at >= DAY_START && v.at < asOf);
    if (item.businessDate < DAY && changedToday) {
      truth.adjustments.count += 1;
      truth.adjustments.collectedDeltaSen +=
        (now === 'success' ? item.amountSen : 0) - (before === 'success' ? item.amountSen : 0);
    }
  }
  return truth;
}
