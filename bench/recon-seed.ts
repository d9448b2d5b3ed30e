/**
 * Seeds the store of the reconciliation benchmark (bench/recon.ts): one agency day of N LZS postings with
 * everything around it that a real day has, through the real write path:
 *
 * - every record is schema-checked (`deps.validators.bankWebhookRequest`), prepared (`prepareRecord`) and
 *   stored with `store.bankPostings.ingestBatch` in batches of 5,000, each received 30 s after its last
 *   record's time (so `webhook_batches`, `bank_postings`, `bank_posting_versions` and `anomalies` are what the
 *   webhook writes); then the pipeline jobs run in-process (`createInProcessRuntime(deps).drain()`), which
 *   writes `normalised_postings` and `ledger_entries` (with `received_at`) as in production;
 * - the day: N LZS postings spread evenly over 2026-11-20 (Asia/Kuala_Lumpur), 90% success, 6% pending and
 *   4% failed; 60% of the pending ones are resolved later in the day (a second version); fourteen zakat types
 *   (7% fitrah as rate x dependants, some not adding up or without the dependants), sixteen states (mostly
 *   Selangor), about 3% flagged (zakat_amount, IC date or e-mail disagreeing);
 * - around it: 2% PPZ and 0.5% bank live-test records interleaved (other sinks, filtered out by the reads);
 *   N/500 LZS postings of the day before left pending, 70% of them resolved during the day (adjustments)
 *   and the rest still pending (opening and closing pending); and a contradicting record per 20,000
 *   (anomalies).
 *
 * Deterministic: the same N gives the same records (ordernos included), hence the same workbook content.
 */
import { performance } from 'node:perf_hooks';
import type { Deps } from '../core/deps.ts';
import { sha256Hex } from '../core/canonical-json.ts';
import { businessDate, klDayStartUtc, prevDay } from '../core/time.ts';
import { prepareRecord } from '../ingest/bank-webhook/prepare.ts';
import { normaliseRecord } from '../pipeline/normalise/rules.ts';
import { createInProcessRuntime } from '../pipeline/in-process-runtime.ts';
import type { BankTransaction } from '../schemas/index.ts';

export const SEED_PARTNER = 'demo-bank'; // fixtures/demo/seed.json
export const SEED_SINK = 'LZS';
const BATCH_EVENTS = 5000;
const RECEIVED_LAG_MS = 30_000;

/** What the summary of the seeded day must show (checked by the benchmark). */
export interface SeedExpectation {
  rows: number;
  day: string;
  /** LZS postings of the day. */
  transactions: number;
  flagged: number;
  anomalies: number;
  /** LZS versions received during the day: every posting of the day, their updates, and the resolved earlier ones. */
  movements: number;
  adjustments: number;
  pendingClosing: number;
  /** Rows in the whole store, for the report. */
  storedPostings: number;
  batches: number;
  ingestMs: number;
  pipelineMs: number;
}

// ---------------------------------------------------------------------------------------------------
// Deterministic pseudo-random choices: a hash of (index, salt) in [0, 1)

function rand(i: number, salt: number): number {
  let h = Math.imul(i ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(salt + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return (h >>> 0) / 4_294_967_296;
}

const pick = <T>(list: readonly T[], i: number, salt: number): T =>
  list[Math.floor(rand(i, salt) * list.length)]!;

/** Cumulative weights: the first entry whose share the draw falls under. */
function weighted<T>(table: readonly (readonly [T, number])[], i: number, salt: number): T {
  let r = rand(i, salt) * table.reduce((sum, [, w]) => sum + w, 0);
  for (const [value, weight] of table) {
    if (r < weight) return value;
    r -= weight;
  }
  return table[table.length - 1]![0];
}

const FIRST = ['Nur Aisyah', 'Muhammad Firdaus', 'Siti Khadijah', 'Ahmad Faiz', 'Nurul Huda', 'Mohd Hafiz'];
const SECOND = ['Ahmad', 'Ismail', 'Abdullah', 'Hassan', 'Yusof', 'Osman', 'Ibrahim', 'Rahman'];
const CITIES = ['Shah Alam', 'Petaling Jaya', 'Klang', 'Kajang', 'Subang Jaya', 'Selayang'];
const TYPES: readonly (readonly [string, number])[] = [
  ['zakat_pendapatan', 45],
  ['zakat_perniagaan', 10],
  ['zakat_simpanan', 10],
  ['zakat_kwsp', 6],
  ['zakat_saham', 5],
  ['zakat_emas', 5],
  ['fitrah', 5],
  ['zakat_fitrah', 2],
  ['zakat_qada', 3],
  ['zakat_perak', 2],
  ['zakat_pertanian', 2],
  ['zakat_padi', 2],
  ['zakat_ternakan', 2],
  ['zakat_rikaz', 1],
];
const STATES: readonly (readonly [string, number])[] = [
  ['selangor', 80],
  ['kuala_lumpur', 8],
  ['putrajaya', 2],
  ['negeri_sembilan', 2],
  ['perak', 2],
  ['pahang', 1],
  ['johor', 1],
  ['melaka', 1],
  ['kedah', 0.5],
  ['kelantan', 0.5],
  ['terengganu', 0.5],
  ['pulau_pinang', 0.5],
  ['perlis', 0.25],
  ['sabah', 0.25],
  ['sarawak', 0.25],
  ['labuan', 0.25],
];
const FITRAH_RATE_SEN = 700;

type Kind = 'day' | 'before' | 'ppz' | 'test';
const SALT: Record<Kind, number> = { day: 0, before: 100, ppz: 200, test: 300 };

/** The first version of the i-th record of a kind, at `epochMs`. */
function makeRecord(kind: Kind, i: number, epochMs: number): BankTransaction {
  const s = SALT[kind];
  const first = pick(FIRST, i, s + 1);
  const second = pick(SECOND, i, s + 2);
  const name = `${first} ${first.startsWith('Nur') || first.startsWith('Siti') ? 'binti' : 'bin'} ${second}`;
  const email = `${first.split(' ')[0]!.toLowerCase()}.${i}@example.my`;
  const type = weighted(TYPES, i, s + 3);
  const isFitrah = type === 'fitrah' || type === 'zakat_fitrah';
  const dependants = 1 + Math.floor(rand(i, s + 4) * 8);
  const flaw = rand(i, s + 5);
  let sen = isFitrah ? FITRAH_RATE_SEN * dependants : 1000 + Math.floor(rand(i, s + 6) * 499_000);
  if (isFitrah && flaw < 0.02) sen += 100; // FITRAH_MISMATCH
  const ringgit = (sen / 100).toFixed(2);
  const status = weighted(
    [
      ['success', 90],
      ['pending', 6],
      ['failed', 4],
    ] as const,
    i,
    s + 7,
  );
  const yy = 50 + Math.floor(rand(i, s + 8) * 50);
  const mm = flaw >= 0.02 && flaw < 0.025 ? 13 : 1 + Math.floor(rand(i, s + 9) * 12); // IC_INVALID_DATE
  const dd = 1 + Math.floor(rand(i, s + 10) * 28);
  const ic = `${yy}${String(mm).padStart(2, '0')}${String(dd).padStart(2, '0')}10${String(i % 10_000).padStart(4, '0')}`;
  const data: BankTransaction['data'] = {
    email: flaw >= 0.025 && flaw < 0.03 ? `other.${i}@example.my` : email, // EMAIL_MISMATCH
    zakat_name: name,
    zakat_ic_no: ic,
    zakat_state: weighted(STATES, i, s + 11) as BankTransaction['data']['zakat_state'],
    zakat_type: type as BankTransaction['data']['zakat_type'],
    zakat_year: '2026',
    zakat_address: `No ${1 + (i % 200)}, Jalan Damai ${1 + (i % 30)}`,
    zakat_postcode: String(40_000 + (i % 900)),
    zakat_city: pick(CITIES, i, s + 12),
    // ZAKAT_AMOUNT_DIFFERS
    zakat_amount: flaw >= 0.03 && flaw < 0.04 ? (sen / 100 + 1).toFixed(2) : ringgit,
  };
  if (rand(i, s + 13) >= 0.05) data.zakat_phone = `01${String(10_000_000 + (i % 89_999_999))}`;
  if (isFitrah) {
    data.zakat_rate = (FITRAH_RATE_SEN / 100).toFixed(2);
    // FITRAH_DEPENDANT_MISSING on a few
    if (flaw < 0.02 || flaw >= 0.05) data.zakat_dependant = String(dependants);
  }
  return {
    agency: kind === 'ppz' ? 'BANKPPZ' : kind === 'test' ? 'BANK' : 'BANKLZS',
    orderno: `${kind === 'ppz' ? 'PZ' : kind === 'test' ? 'TS' : kind === 'before' ? 'LB' : 'LZ'}${String(i).padStart(8, '0')}`,
    amount: Number(ringgit),
    name,
    email,
    time: klIso(epochMs),
    status,
    data,
  };
}

/** `YYYY-MM-DDTHH:mm:ss+08:00`, the bank's form. */
function klIso(epochMs: number): string {
  return `${new Date(epochMs + 8 * 3_600_000).toISOString().slice(0, 19)}+08:00`;
}

/** Whether a pending record is resolved later, and to what. */
function resolution(kind: Kind, i: number, share: number): 'success' | 'failed' | undefined {
  const r = rand(i, SALT[kind] + 20);
  if (r >= share) return undefined;
  return r < share * (2 / 3) ? 'success' : 'failed';
}

interface SeedEvent {
  tx: BankTransaction;
  outcome: 'accepted' | 'updated' | 'conflict';
  /** The instant the event happens (the batch is received 30 s after its last event). */
  at: number;
}

/** The day's stream of records in arrival order. */
function* dayEvents(
  rows: number,
  day: string,
  before: { count: number; start: number; step: number },
): Generator<SeedEvent> {
  const start = Date.parse(klDayStartUtc(day));
  const timeOf = (i: number) => start + Math.floor((i * 86_400_000) / rows / 1000) * 1000;
  const lag = Math.max(1, Math.min(20_000, Math.floor(rows / 10)));
  const anomalyEvery = 20_000;
  const resolveLater: number[] = [];
  let nextBefore = 0;
  let ppz = 0;
  let test = 0;
  for (let i = 0; i < rows; i += 1) {
    const at = timeOf(i);
    const tx = makeRecord('day', i, at);
    yield { tx, outcome: 'accepted', at };
    if (tx.status === 'pending' && resolution('day', i, 0.6)) resolveLater.push(i);
    // Resolutions of the pending ones, `lag` records later.
    while (resolveLater.length > 0 && resolveLater[0]! <= i - lag) {
      yield resolved('day', resolveLater.shift()!, timeOf, at);
    }
    // The day before's pending postings, resolved over the morning.
    if (i % 50 === 25) {
      while (nextBefore < before.count) {
        const j = nextBefore++;
        if (resolution('before', j, 0.7)) {
          yield resolved('before', j, (k) => before.start + k * before.step, at);
          break;
        }
      }
    }
    // Contradicting records: a final posting resent with another amount.
    if (i % anomalyEvery === anomalyEvery - 1 && i >= lag) {
      const r = i - lag;
      const stored = makeRecord('day', r, timeOf(r));
      if (stored.status !== 'pending') {
        yield { tx: { ...stored, amount: Number((stored.amount + 1).toFixed(2)) }, outcome: 'conflict', at };
      }
    }
    if (i % 50 === 49) {
      yield { tx: makeRecord('ppz', ppz, at), outcome: 'accepted', at };
      ppz += 1;
    }
    if (i % 200 === 199) {
      yield { tx: makeRecord('test', test, at), outcome: 'accepted', at };
      test += 1;
    }
  }
  const last = timeOf(rows - 1);
  for (const i of resolveLater) yield resolved('day', i, timeOf, last);
}

function resolved(kind: Kind, i: number, timeOf: (i: number) => number, at: number): SeedEvent {
  const tx = makeRecord(kind, i, timeOf(i));
  return { tx: { ...tx, status: resolution(kind, i, 1)! }, outcome: 'updated', at };
}

/** Stores the events in batches of 5,000; returns the number of batches. */
async function ingest(deps: Deps, events: Iterable<SeedEvent>): Promise<number> {
  let batches = 0;
  let buffer: SeedEvent[] = [];
  const flush = async () => {
    if (buffer.length === 0) return;
    const transactions = buffer.map((e) => e.tx);
    const request = { transactions };
    if (!deps.validators.bankWebhookRequest(request)) {
      const errors = JSON.stringify(deps.validators.bankWebhookRequest.errors()).slice(0, 500);
      throw new Error(`a seeded batch fails the schema: ${errors}`);
    }
    const body = Buffer.from(JSON.stringify(request));
    const receivedAt = new Date(buffer[buffer.length - 1]!.at + RECEIVED_LAG_MS);
    const response = await deps.store.bankPostings.ingestBatch({
      partnerId: SEED_PARTNER,
      receivedAt,
      businessDate: businessDate(receivedAt),
      contentType: 'application/json',
      body,
      bodySha256: sha256Hex(body),
      records: transactions.map((tx) => prepareRecord(tx, deps.config.webhook.routes)),
    });
    response.results.forEach((result, k) => {
      if (result.outcome !== buffer[k]!.outcome) {
        throw new Error(
          `seeded ${buffer[k]!.tx.orderno}: expected ${buffer[k]!.outcome}, got ${result.outcome}`,
        );
      }
    });
    batches += 1;
    buffer = [];
  };
  for (const event of events) {
    buffer.push(event);
    if (buffer.length >= BATCH_EVENTS) await flush();
  }
  await flush();
  return batches;
}

/** Seeds `rows` postings of `day` into the (fresh, demo-seeded) store of `deps`; see the top of the file. */
export async function seedReconDay(
  deps: Deps,
  rows: number,
  day: string,
  progress: (line: string) => void = () => undefined,
): Promise<SeedExpectation> {
  const previous = prevDay(day);
  const beforeCount = Math.max(10, Math.floor(rows / 500));
  // From 08:00 to 20:00 of the day before, received that day (one batch per 5,000).
  const beforeStart = Date.parse(klDayStartUtc(previous)) + 8 * 3_600_000;
  const beforeStep = Math.floor((12 * 3_600_000) / beforeCount / 1000) * 1000;
  const t0 = performance.now();

  // The day before: LZS postings still pending at its end.
  const beforeEvents = function* (): Generator<SeedEvent> {
    for (let j = 0; j < beforeCount; j += 1) {
      const at = beforeStart + j * beforeStep;
      const tx = { ...makeRecord('before', j, at), status: 'pending' as const };
      yield { tx, outcome: 'accepted', at };
    }
  };
  let batches = await ingest(deps, beforeEvents());

  // The day: count what the workbook must show while the stream goes by.
  let flagged = 0;
  let anomalies = 0;
  let pendingDay = 0;
  let resolvedDay = 0;
  let resolvedBefore = 0;
  let stored = beforeCount;
  const counted = function* (): Generator<SeedEvent> {
    let n = 0;
    for (const event of dayEvents(rows, day, { count: beforeCount, start: beforeStart, step: beforeStep })) {
      const { tx, outcome } = event;
      if (outcome === 'accepted') stored += 1;
      if (tx.agency === 'BANKLZS') {
        if (outcome === 'conflict') anomalies += 1;
        else if (outcome === 'updated') {
          if (tx.orderno.startsWith('LB')) resolvedBefore += 1;
          else resolvedDay += 1;
        } else {
          if (tx.status === 'pending') pendingDay += 1;
          if (normaliseRecord(tx).exceptions.length > 0) flagged += 1;
        }
      }
      n += 1;
      if (n % 100_000 === 0) progress(`${n.toLocaleString('en-US')} records stored`);
      yield event;
    }
  };
  batches += await ingest(deps, counted());
  const ingestMs = performance.now() - t0;

  progress('pipeline (normalise, ledger)');
  const p0 = performance.now();
  const relay = createInProcessRuntime(deps, { pollMs: 20, maxAttempts: 3, backoffMs: 0 });
  await relay.drain();
  const failed = await relay.failed();
  await relay.stop();
  if (failed.length > 0) throw new Error(`pipeline jobs failed while seeding: ${JSON.stringify(failed[0])}`);
  const pipelineMs = performance.now() - p0;

  return {
    rows,
    day,
    transactions: rows,
    flagged,
    anomalies,
    movements: rows + resolvedDay + resolvedBefore,
    adjustments: resolvedBefore,
    pendingClosing: pendingDay - resolvedDay + (beforeCount - resolvedBefore),
    storedPostings: stored,
    batches,
    ingestMs,
    pipelineMs,
  };
}
