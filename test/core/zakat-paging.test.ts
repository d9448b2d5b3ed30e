/**
 * The zakat report's reads (decision 229) against a model: each posting's latest version in each agency's
 * ledger, by business day, then posting, then agency; pages, totals and the stream agree with it on both
 * engines. On SQLite, whose reads run on the web process's own thread, each statement reads only the days
 * asked for, through the ledger's day index, in report order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { openStore } from '../../core/store/index.ts';
import {
  ZAKAT_DAY_COUNTS_SQL,
  ZAKAT_PAGE_SQL,
  ZAKAT_SEEK_SQL,
} from '../../core/store/sqlite/zakat-report.ts';
import { forEachEngine } from '../support/engines.ts';
import { tempDir } from '../helpers.ts';
import { ledgerRowsSql } from '../support/ledger-rows.ts';

const DAYS = ['2026-11-18', '2026-11-19', '2026-11-20', '2026-11-21'];
const RANGES: [string, string][] = [
  ['2026-11-18', '2026-11-21'],
  ['2026-11-19', '2026-11-19'],
  ['2026-11-19', '2026-11-20'],
  ['2026-11-22', '2026-11-30'],
  ['0001-01-01', '9999-12-31'],
];

/** One version of a posting as a sink's ledger holds it (a posting may move to another agency). */
interface Entry {
  sink: string;
  postingId: number;
  version: number;
  day: string;
  /** Inserted after the entries that are not late. */
  late?: boolean;
}

const key = (e: { sink: string; postingId: number; businessDate?: string; day?: string }) =>
  `${e.businessDate ?? e.day}/${e.postingId}/${e.sink}`;

forEachEngine(
  'zakat pages, totals and streams of one agency or several equal each ledger latest versions, by day then posting',
  async (t, open) => {
    const store = await open();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        // Postings 1..8, each with up to three versions, each version in one of two agencies' ledgers; a
        // version `late` reaches the ledger after the others (a newer one may be there before it).
        fc.array(
          fc.record({
            posting: fc.integer({ min: 1, max: 8 }),
            other: fc.boolean(),
            day: fc.constantFrom(...DAYS),
            late: fc.boolean(),
          }),
          { maxLength: 24 },
        ),
        fc.array(
          fc.record({
            scope: fc.constantFrom('mine', 'both', 'both reversed'),
            range: fc.constantFrom(...RANGES),
            limit: fc.integer({ min: 1, max: 5 }),
            page: fc.nat(6),
          }),
          { minLength: 1, maxLength: 5 },
        ),
        async (made, queries) => {
          run += 1;
          const [mine, other] = [`A${run}`, `B${run}`];
          const versions = new Map<number, number>();
          // A posting's versions carry its first version's business day, as the normalise job writes them
          // (PostgreSQL's day counts rely on it: decision 248).
          const days = new Map<number, string>();
          const entries: Entry[] = made.map((m) => {
            const postingId = run * 100 + m.posting;
            const version = (versions.get(postingId) ?? 0) + 1;
            versions.set(postingId, version);
            const day = days.get(postingId) ?? m.day;
            days.set(postingId, day);
            return { sink: m.other ? other : mine, postingId, version, day, late: m.late };
          });
          const arriving = [...entries.filter((e) => !e.late), ...entries.filter((e) => e.late)];
          if (entries.length > 0)
            // Each entry's amount in sen is its version number.
            await store.write(
              ledgerRowsSql(
                store.engine,
                arriving.map((e) => ({ ...e, amountSen: e.version })),
              ),
            );

          for (const q of queries) {
            const [start, end] = q.range;
            const sinks = q.scope === 'mine' ? [mine] : q.scope === 'both' ? [mine, other] : [other, mine];
            const latest = entries.filter(
              (e) =>
                !entries.some(
                  (o) => o.sink === e.sink && o.postingId === e.postingId && o.version > e.version,
                ),
            );
            const expected = latest
              .filter((e) => sinks.includes(e.sink) && e.day >= start && e.day <= end)
              .sort(
                (a, b) =>
                  a.day.localeCompare(b.day) || a.postingId - b.postingId || a.sink.localeCompare(b.sink),
              )
              .map((e) => `${key(e)}:v${e.version}`);
            const query = { sink: sinks.length === 1 ? mine : sinks, start, end };
            const { rows, total } = await store.zakatReport.page({
              ...query,
              limit: q.limit,
              offset: q.page * q.limit,
            });
            const shown = (r: { sink: string; postingId: number; businessDate: string; amountSen: number }) =>
              `${key(r)}:v${r.amountSen}`;
            assert.equal(total, expected.length, 'total');
            assert.deepEqual(rows.map(shown), expected.slice(q.page * q.limit, (q.page + 1) * q.limit));
            const streamed: string[] = [];
            for await (const row of store.zakatReport.rows(query)) streamed.push(shown(row));
            assert.deepEqual(streamed, expected, 'every row streamed, in report order');
          }
        },
      ),
      { numRuns: store.engine === 'sqlite' ? 80 : 30 },
    );
  },
);

test('on SQLite each zakat report statement walks its index in report order: no scan, no sort', (t) => {
  const file = path.join(tempDir(t), 'amil.db');
  const store = openStore(file);
  const raw = new Database(file, { readonly: true });
  t.after(async () => {
    raw.close();
    await store.close();
  });
  const params = { sink: 'LZS', start: '2026-11-19', end: '2026-11-20', limit: 100, offset: 0 };
  const DAY_INDEX = 'COVERING INDEX ledger_by_day_in_posting_order';
  for (const [name, sql, index, bound] of [
    // The per-day counts (decision 234): one row per day of the range, not one per entry.
    ['day counts', ZAKAT_DAY_COUNTS_SQL, 'PRIMARY KEY', 'business_date>? AND business_date<?'],
    ['page', ZAKAT_PAGE_SQL, DAY_INDEX, 'business_date>? AND business_date<?'],
    // A chunk of the stream starts at the last row read, not at the first day.
    ['stream chunk', ZAKAT_SEEK_SQL, DAY_INDEX, '(business_date,posting_id)>(?,?) AND business_date<?'],
  ] as const) {
    const plan = raw
      .prepare<Record<string, unknown>, { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
      .all({ ...params, afterDay: '2026-11-19', afterPosting: 7 })
      .map((row) => row.detail);
    assert.ok(plan.includes(`SEARCH l USING ${index} (sink=? AND ${bound})`), `${name}: ${plan.join(' | ')}`);
    assert.ok(
      plan.every((step) => !/^SCAN (l|n)\b|TEMP B-TREE/.test(step)),
      `${name} scans or sorts: ${plan.join(' | ')}`,
    );
  }
});
