import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Clock } from './clock.ts';
import { measureClockOffset } from './clock-offset.ts';
import type { Readiness } from './readiness.ts';
import type { Store } from './store/index.ts';
import { version } from './version.ts';

/** Jobs of one pipeline queue by state, from wherever the jobs are (BullMQ in Redis, or the outbox). */
export interface QueueJobCounts {
  queue: string;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
}

/** The service's Prometheus metrics: one registry per process (never the global one), so tests build several. */
export interface Metrics {
  readonly registry: Registry;
  /** One HTTP request: its route template (never the raw path), method and status. */
  observeHttp(route: string, method: string, status: number, seconds: number): void;
  /** One webhook request, by the HTTP status it got. */
  webhookBatch(status: number): void;
  /** The records of an accepted webhook batch, by outcome. */
  webhookRecords(summary: { accepted: number; duplicate: number; updated: number; conflict: number }): void;
  /** A webhook body read and prepared: on a worker thread, or on the request thread (small bodies). */
  webhookPrepared(thread: 'worker' | 'request'): void;
  /** Where queue counts come from (the process that knows the runtime sets it); none until then. */
  setQueueCounts(source: () => Promise<QueueJobCounts[]>): void;
}

/**
 * How far back scrapes look for versions not ledgered and e-mails not sent: far longer than any alert's
 * `for`, short enough that a scrape stays cheap (SQLite work blocks this process's event loop).
 */
export const METRICS_WINDOW_MS = 48 * 3600 * 1000;

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/**
 * Shares one in-flight call: prom-client collects every metric of a scrape at once, so the gauges that one
 * query feeds all get the same answer, and the query runs once.
 */
function shared<T>(fn: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  return () =>
    (inFlight ??= fn().finally(() => {
      inFlight = undefined;
    }));
}

const ageSeconds = (now: Date, iso: string | null): number =>
  iso === null ? 0 : Math.max(0, (now.getTime() - Date.parse(iso)) / 1000);

/**
 * Builds the registry. Counters count what this process does; gauges that read the store (or Redis) are
 * computed at scrape time with indexed queries, so they are true whichever process did the work.
 */
export function createMetrics(deps: { store: Store; clock: Clock; readiness: Readiness }): Metrics {
  const { store, clock, readiness } = deps;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  let queueCounts: (() => Promise<QueueJobCounts[]>) | undefined;
  const window = () => new Date(clock.now().getTime() - METRICS_WINDOW_MS);
  const backlog = shared(() => store.ops.outboxBacklog());
  const recon = shared(() => store.ops.reconHealth(window()));
  const unledgered = shared(() => store.ops.unledgeredVersions(window()));

  new Gauge({
    name: 'amil_build_info',
    help: 'Always 1; the version label says which build runs.',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version }, 1);

  const http = new Histogram({
    name: 'amil_http_request_duration_seconds',
    help: 'HTTP request latency by route template, method and status class.',
    labelNames: ['route', 'method', 'status_class'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const batches = new Counter({
    name: 'amil_webhook_batches_total',
    help: 'Bank webhook requests by HTTP status (200 stored; anything else refused).',
    labelNames: ['status'],
    registers: [registry],
  });
  const records = new Counter({
    name: 'amil_webhook_records_total',
    help: 'Records of stored webhook batches by outcome (accepted, duplicate, updated, conflict).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const prepared = new Counter({
    name: 'amil_webhook_bodies_prepared_total',
    help: 'Bank webhook bodies parsed, checked and prepared, by thread (worker, or request for small bodies).',
    labelNames: ['thread'],
    registers: [registry],
  });

  new Gauge({
    name: 'amil_ready',
    help: '1 when the dependency answers the readiness probe (the store commits a write; Redis answers).',
    labelNames: ['dependency'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await readiness.check()) this.set({ dependency: r.dependency }, r.ok ? 1 : 0);
    },
  });

  new Gauge({
    name: 'amil_clock_offset_seconds',
    help: "This machine's clock minus PostgreSQL's (positive: ahead); 0 on SQLite (one machine). Readiness fails beyond 1 s.",
    registers: [registry],
    async collect() {
      // A store that does not answer leaves the last offset measured (amil_ready says why), not the scrape failed.
      const offset = await measureClockOffset(store).catch(() => undefined);
      if (offset) this.set(offset.offsetMs / 1000);
    },
  });

  new Gauge({
    name: 'amil_outbox_waiting',
    help: 'Outbox rows not yet handed to their queue, per queue.',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const row of await backlog()) this.set({ queue: row.queue }, row.waiting);
    },
  });
  new Gauge({
    name: 'amil_outbox_failed',
    help: 'Outbox rows that failed for good (embedded mode), per queue.',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const row of await backlog()) this.set({ queue: row.queue }, row.failed);
    },
  });
  new Gauge({
    name: 'amil_outbox_oldest_waiting_age_seconds',
    help: 'Age of the oldest outbox row not yet handed over, per queue (0 when none waits).',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      this.reset();
      const now = clock.now();
      for (const row of await backlog()) this.set({ queue: row.queue }, ageSeconds(now, row.oldestWaitingAt));
    },
  });

  new Gauge({
    name: 'amil_queue_jobs',
    help: 'Pipeline jobs per queue and state (BullMQ in Redis mode, the outbox in embedded mode).',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      if (!queueCounts) return;
      // Redis down: no counts rather than no scrape (amil_ready{dependency="redis"} says why).
      const all = await queueCounts().catch(() => []);
      for (const counts of all) {
        for (const state of QUEUE_STATES) this.set({ queue: counts.queue, state }, counts[state]);
      }
    },
  });

  new Gauge({
    name: 'amil_callbacks',
    help: 'Direct callbacks not delivered (queued, dead, gone) by state and attempts made (0, 1, 2-4, 5+); queued with attempts > 0 are failing and retrying.',
    labelNames: ['state', 'attempts'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const row of await store.ops.callbackCounts()) {
        this.set({ state: row.state, attempts: row.attempts }, row.count);
      }
    },
  });

  new Gauge({
    name: 'amil_recon_emails_failed',
    help: 'Runs of the last 48 hours whose workbook e-mail failed and was never sent, per sink.',
    labelNames: ['sink'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const row of await recon()) this.set({ sink: row.sink }, row.emailsFailed);
    },
  });
  new Gauge({
    name: 'amil_recon_last_nightly_run_timestamp_seconds',
    help: 'When the last nightly reconciliation run of the sink finished (Unix seconds).',
    labelNames: ['sink'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const row of await recon()) {
        if (row.lastNightlyAt) this.set({ sink: row.sink }, Date.parse(row.lastNightlyAt) / 1000);
      }
    },
  });

  new Gauge({
    name: 'amil_versions_unledgered',
    help: 'Posting versions received in the last 48 hours (acknowledged to the bank) not in their ledger yet.',
    registers: [registry],
    async collect() {
      this.set((await unledgered()).count);
    },
  });
  new Gauge({
    name: 'amil_versions_unledgered_oldest_age_seconds',
    help: 'Age of the oldest version received in the last 48 hours not in its ledger yet (0 when none).',
    registers: [registry],
    async collect() {
      this.set(ageSeconds(clock.now(), (await unledgered()).oldestReceivedAt));
    },
  });

  return {
    registry,
    observeHttp(route, method, status, seconds) {
      http.observe({ route, method, status_class: `${Math.floor(status / 100)}xx` }, seconds);
    },
    webhookBatch(status) {
      batches.inc({ status: String(status) });
    },
    webhookRecords(summary) {
      for (const outcome of ['accepted', 'duplicate', 'updated', 'conflict'] as const) {
        records.inc({ outcome }, summary[outcome]);
      }
    },
    webhookPrepared(thread) {
      prepared.inc({ thread });
    },
    setQueueCounts(source) {
      queueCounts = source;
    },
  };
}
