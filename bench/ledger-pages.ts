/**
 * Pages over an agency's ledger on both engines (a report, not a test): a year of postings in one agency's
 * ledger, read as the zakat report and the dashboard's postings page read it (decisions 248, 249).
 *
 *   npm run bench:ledger-pages                          # 1,000,000 ledger entries
 *   BENCH_LEDGER_ENTRIES=200000 npm run bench:ledger-pages
 *
 * On each engine (SQLite in a temporary DATA_DIR, PostgreSQL on a throwaway server: bench/postgres.ts), in
 * this process, through the store's own calls (no HTTP: bench:reports times the HTTP side of pages):
 * - the zakat report's 100-row page over the year, first, middle and last;
 * - the dashboard's postings page filtered by `code=any`, and the code filter's list of codes;
 * - the dashboard's overview of 30 days (decision 251), beside "naive overview", what it cost before the
 *   day figures: the 30 days' latest versions summed by day;
 * - the baseline, in the same run: a read of 100 entries of the ledger by their key (the cheapest read
 *   there is), and "naive", what a page cost before the day counts: a count of the year's latest versions
 *   plus the page by OFFSET (run a few times only: it takes seconds).
 * One entry in 1,000 carries an exception code; one posting in 100 has a second version. Always exits 0
 * when the benchmark ran.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openStore, type Store } from '../core/store/index.ts';
import { openDatabase } from '../core/store/sqlite/db.ts';
import { openPgStore } from '../core/store/pg/index.ts';
import { LATEST_IN_LEDGER } from '../core/store/ledger-latest.ts';
import { envInt } from './env.ts';
import { fmtInt, fmtMs, fmtRatio, percentile, table } from './format.ts';
import { startBenchPostgres } from './postgres.ts';

const FIRST = '2025-12-01';
const LAST = '2026-11-30';
const DAYS = 365;
const PAGE = 100;
const REPEATS = 50;
const NAIVE_REPEATS = 3;

interface Engine {
  name: string;
  store: Store;
  /** Runs SQL for the baselines (literal values only). */
  sql(text: string): Promise<unknown[]>;
  close(): Promise<void>;
}

/** The ledger's rows as one statement can make them: `i` from 1 to `entries` (SQL of either engine). */
const entryValues = (day: string, exceptions: string) =>
  `'LZS', i, 1, ${day}, ${day}, 0, 'success', 100, ${exceptions}`;

/** Every hundredth posting corrected: its second version, without the codes of its first. */
const SECOND_VERSIONS = `INSERT INTO normalised_postings (posting_id, version, batch_id, sink, orderno, bank_agency, status, amount_sen, name, email, time_utc, business_date, received_date, exceptions, normalised_at)
  SELECT posting_id, 2, batch_id, sink, orderno, bank_agency, status, amount_sen, name, email, time_utc,
    business_date, received_date, '[]', normalised_at
  FROM normalised_postings WHERE version = 1 AND posting_id % 100 = 0`;
const SECOND_ENTRIES = `INSERT INTO ledger_entries (sink, posting_id, version, business_date, received_date,
    is_adjustment, status, amount_sen, exceptions, created_at, received_at)
  SELECT sink, posting_id, 2, business_date, received_date, is_adjustment, status, amount_sen, '[]', created_at,
    received_at
  FROM ledger_entries WHERE version = 1 AND posting_id % 100 = 0`;

function seedSqlite(dir: string, entries: number): void {
  const db = openDatabase(path.join(dir, 'amil.db'));
  db.pragma('foreign_keys = OFF');
  const series = `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${entries})`;
  const day = `date('${FIRST}', '+' || (i * ${DAYS} / ${entries + 1}) || ' days')`;
  const flagged = `CASE WHEN i % 1000 = 0 THEN '["EMAIL_MISMATCH"]' ELSE '[]' END`;
  db.transaction(() => {
    db.exec(`${series} INSERT INTO normalised_postings (posting_id, version, batch_id, sink, orderno, bank_agency,
        status, amount_sen, name, email, time_utc, business_date, received_date, exceptions, normalised_at)
      SELECT i, 1, 'b', 'LZS', 'Z' || i, 'BANK', 'success', 100, 'Nur', 'n@example.my', '2026-01-01T00:00:00.000Z',
        ${day}, ${day}, ${flagged}, '2026-01-01T00:00:00.000Z' FROM s`);
    db.exec(SECOND_VERSIONS);
    db.exec(`${series} INSERT INTO ledger_entries (sink, posting_id, version, business_date, received_date,
        is_adjustment, status, amount_sen, exceptions, created_at, received_at)
      SELECT ${entryValues(day, flagged)}, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' FROM s`);
    db.exec(SECOND_ENTRIES);
  })();
  db.exec('ANALYZE');
  db.close();
}

async function sqliteEngine(entries: number): Promise<Engine> {
  const dir = mkdtempSync(path.join(tmpdir(), 'amil-bench-ledger-'));
  await openStore(path.join(dir, 'amil.db')).close(); // the schema, every migration
  seedSqlite(dir, entries);
  const store = openStore(path.join(dir, 'amil.db'));
  const raw = openDatabase(path.join(dir, 'amil.db'));
  return {
    name: 'SQLite',
    store,
    sql: (text) => Promise.resolve(raw.prepare(text).all()),
    close: async () => {
      raw.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresEngine(entries: number): Promise<Engine> {
  const server = await startBenchPostgres();
  const store = openPgStore(server.url);
  await store.ping(); // migrated
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const day = `to_char(date '${FIRST}' + (i * ${DAYS} / ${entries + 1}), 'YYYY-MM-DD')`;
  const flagged = `CASE WHEN i % 1000 = 0 THEN '["EMAIL_MISMATCH"]' ELSE '[]' END`;
  await client.query(`INSERT INTO normalised_postings (posting_id, version, batch_id, sink, orderno, bank_agency,
      status, amount_sen, name, email, time_utc, business_date, received_date, exceptions, normalised_at)
    SELECT i, 1, 'b', 'LZS', 'Z' || i, 'BANK', 'success', 100, 'Nur', 'n@example.my', now(), ${day}, ${day},
      ${flagged}, now()
    FROM generate_series(1, ${entries}) i`);
  await client.query(SECOND_VERSIONS);
  // Each statement's entries are counted by the ledger's trigger, as the pipeline's appends are.
  await client.query(`INSERT INTO ledger_entries (sink, posting_id, version, business_date, received_date,
      is_adjustment, status, amount_sen, exceptions, created_at, received_at)
    SELECT ${entryValues(day, flagged)}, now(), now() FROM generate_series(1, ${entries}) i`);
  await client.query(SECOND_ENTRIES);
  await store.ledger.foldDayCounts();
  await client.query('VACUUM ANALYZE');
  return {
    name: 'PostgreSQL',
    store,
    sql: async (text) => (await client.query<Record<string, unknown>>(text)).rows,
    close: async () => {
      await client.end();
      await store.close();
      await server.stop();
    },
  };
}

interface Timing {
  p50: number;
  p99: number;
}

async function time(repeats: number, run: () => Promise<unknown>): Promise<Timing> {
  for (let i = 0; i < Math.min(3, repeats); i += 1) await run(); // warm-up
  const samples = new Float64Array(repeats);
  for (let i = 0; i < repeats; i += 1) {
    const start = performance.now();
    await run();
    samples[i] = performance.now() - start;
  }
  samples.sort();
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

async function measure(engine: Engine, entries: number): Promise<string[][]> {
  const { store } = engine;
  const year = { sink: 'LZS', start: FIRST, end: LAST, limit: PAGE };
  const { total } = await store.zakatReport.page({ ...year, offset: 0 });
  const lastOffset = Math.floor((total - 1) / PAGE) * PAGE;
  // The baselines: 100 entries by their key, and a page as it was read before the day counts.
  const raw = await time(REPEATS, () =>
    engine.sql(`SELECT * FROM ledger_entries WHERE sink = 'LZS' AND business_date = '2026-06-01'
      ORDER BY posting_id LIMIT ${PAGE}`),
  );
  const latest = `FROM ledger_entries l WHERE l.sink = 'LZS' AND l.business_date BETWEEN '${FIRST}' AND '${LAST}'
    AND ${LATEST_IN_LEDGER}`;
  const naive = await time(NAIVE_REPEATS, async () => {
    await engine.sql(`SELECT count(*) AS n ${latest}`);
    await engine.sql(`SELECT l.posting_id ${latest} ORDER BY l.business_date, l.posting_id
      LIMIT ${PAGE} OFFSET ${Math.floor(lastOffset / 2)}`);
  });
  const month = { first: '2026-06-01', last: '2026-06-30' };
  const naiveOverview = await time(NAIVE_REPEATS, () =>
    engine.sql(`SELECT l.business_date, count(*), sum(l.amount_sen) FROM ledger_entries l
      WHERE l.sink = 'LZS' AND l.business_date BETWEEN '${month.first}' AND '${month.last}'
        AND ${LATEST_IN_LEDGER}
      GROUP BY l.business_date`),
  );
  // Each scenario with the naive read it replaced.
  const rows: [string, Timing, Timing][] = [
    ['zakat page, first', await time(REPEATS, () => store.zakatReport.page({ ...year, offset: 0 })), naive],
    [
      'zakat page, middle',
      await time(REPEATS, () =>
        store.zakatReport.page({ ...year, offset: Math.floor(lastOffset / PAGE / 2) * PAGE }),
      ),
      naive,
    ],
    [
      'zakat page, last',
      await time(REPEATS, () => store.zakatReport.page({ ...year, offset: lastOffset })),
      naive,
    ],
    [
      'postings page, code=any',
      await time(REPEATS, () =>
        store.dashboardReads.postingsPage(
          { agency: 'LZS', firstDay: FIRST, lastDay: LAST, code: 'any' },
          50,
          0,
        ),
      ),
      naive,
    ],
    [
      'the code list',
      await time(REPEATS, () =>
        store.dashboardReads.postingCodes({ agency: 'LZS', firstDay: FIRST, lastDay: LAST }),
      ),
      naive,
    ],
    [
      'overview, 30 days',
      await time(REPEATS, () => store.dashboardReads.overview('LZS', month.first, month.last)),
      naiveOverview,
    ],
  ];
  return [
    ...rows.map(([scenario, t, before]) => [
      `${engine.name}: ${scenario}`,
      fmtMs(t.p50),
      fmtMs(t.p99),
      fmtRatio(t.p50 / raw.p50),
      fmtRatio(before.p50 / t.p50),
    ]),
    [`${engine.name}: baseline, 100 entries by key`, fmtMs(raw.p50), fmtMs(raw.p99), '1.0', '-'],
    [
      `${engine.name}: naive page (count + OFFSET)`,
      fmtMs(naive.p50),
      fmtMs(naive.p99),
      fmtRatio(naive.p50 / raw.p50),
      '1.0',
    ],
    [
      `${engine.name}: naive overview (30 days summed)`,
      fmtMs(naiveOverview.p50),
      fmtMs(naiveOverview.p99),
      fmtRatio(naiveOverview.p50 / raw.p50),
      '1.0',
    ],
    [`${engine.name}: postings in the year`, fmtInt(total), `of ${fmtInt(entries)} entries`, '', ''],
  ];
}

async function main(): Promise<void> {
  const entries = envInt('BENCH_LEDGER_ENTRIES', 1_000_000, 10_000, 20_000_000);
  const rows: string[][] = [];
  for (const open of [sqliteEngine, postgresEngine]) {
    const engine = await open(entries);
    try {
      rows.push(...(await measure(engine, entries)));
    } finally {
      await engine.close();
    }
  }
  console.log(table(['scenario', 'p50 ms', 'p99 ms', '/ baseline p50', 'naive / this'], rows));
  console.log('baseline: 100 entries of one day read by key on the same engine, in the same run');
  console.log(
    'naive / this: the read each scenario replaced (the naive page, or the naive overview) over it',
  );
}

await main();
process.exit(0);
