/**
 * The zakat report's pages and the dashboard's postings page are placed by the ledger's day counts on both
 * engines (SQLite: decision 234; PostgreSQL: decision 248, entries counted per statement, later versions
 * subtracted when a page is placed, the appended rows folded by the upkeep). Whatever order versions come
 * in, and however sessions interleave, a page's total and rows are the model's: each posting once, at its
 * latest version in its agency's ledger.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Store, ZakatReportRow } from '../../core/store/index.ts';
import { onBothEngines, onPostgres } from '../support/engines.ts';
import { appendFirstVersionsLate, ledgerRowsSql, type LedgerRow } from '../support/ledger-rows.ts';
import { storeWithTwoSessions } from '../support/pg-stores.ts';

const DAYS = ['2026-11-18', '2026-11-19', '2026-11-20', '2026-11-21'];

/** Postings of LZS and PPZ over four days, some in several versions. */
function ledger(): LedgerRow[] {
  const rows: LedgerRow[] = [];
  for (let posting = 1; posting <= 40; posting += 1) {
    const sink = posting % 4 === 0 ? 'PPZ' : 'LZS';
    const day = DAYS[posting % DAYS.length]!;
    const versions = posting % 5 === 0 ? [1, 2, 3] : posting % 7 === 0 ? [2, 1] : [1];
    for (const version of versions) rows.push({ sink, postingId: posting, version, day, amountSen: 100 });
  }
  return rows;
}

/** The model: each (agency, posting) once, at its latest version, in report order. */
function expected(rows: readonly LedgerRow[], sinks: string[], first: string, last: string) {
  const latest = new Map<string, LedgerRow>();
  for (const row of rows) {
    const key = `${row.sink}/${row.postingId}`;
    if ((latest.get(key)?.version ?? 0) < row.version) latest.set(key, row);
  }
  return [...latest.values()]
    .filter((r) => sinks.includes(r.sink) && r.day >= first && r.day <= last)
    .sort((a, b) =>
      a.day !== b.day ? (a.day < b.day ? -1 : 1) : a.postingId - b.postingId || (a.sink < b.sink ? -1 : 1),
    )
    .map((r) => `${r.sink}/${r.postingId}`);
}

const keys = (rows: readonly ZakatReportRow[]) => rows.map((r) => `${r.sink}/${r.postingId}`);

/** Every page of `limit` from offset 0, each checked against the model's total. */
async function paged(
  store: Store,
  sinks: string[],
  first: string,
  last: string,
  limit: number,
  total: number,
) {
  const seen: string[] = [];
  for (let offset = 0; offset <= total; offset += limit) {
    const page = await store.zakatReport.page({ sink: sinks, start: first, end: last, limit, offset });
    assert.equal(page.total, total, `${sinks.join('+')} ${first}..${last} @${offset}`);
    seen.push(...keys(page.rows));
  }
  return seen;
}

async function assertPagesExact(store: Store, rows: readonly LedgerRow[], when: string) {
  for (const sinks of [['LZS'], ['PPZ'], ['LZS', 'PPZ']])
    for (const [first, last] of [
      [DAYS[0]!, DAYS[3]!],
      [DAYS[1]!, DAYS[2]!],
      [DAYS[3]!, DAYS[3]!],
      ['0001-01-01', '9999-12-31'],
    ] as const) {
      const want = expected(rows, sinks, first, last);
      for (const limit of [1, 3, 100])
        assert.deepEqual(await paged(store, sinks, first, last, limit, want.length), want, when);
      if (sinks.length === 1) {
        const filter = { agency: sinks[0]!, firstDay: first, lastDay: last };
        const dashboard = await store.dashboardReads.postingsPage(filter, 3, 3);
        assert.equal(dashboard.total, want.length, `${when}: the dashboard's total`);
        assert.deepEqual(keys(dashboard.rows), want.slice(3, 6), `${when}: the dashboard's second page`);
      }
    }
}

onBothEngines(
  'pages over the ledger are the model at any depth, versions in any order',
  async (_t, store) => {
    const rows = ledger();
    await appendFirstVersionsLate(store, rows);
    await assertPagesExact(store, rows, 'after the appends');
    const folded = await store.ledger.foldDayCounts();
    // SQLite keeps its counts in place; PostgreSQL folds what the appends wrote and the pairing added.
    assert.ok(store.engine === 'postgresql' ? folded > 0 : folded === 0, `${folded} rows folded`);
    await assertPagesExact(store, rows, 'after a fold');
    // A later version of a posting appended afterwards, then one entry removed by hand.
    const more = [...rows, { sink: 'LZS', postingId: 2, version: 2, day: DAYS[2]!, amountSen: 100 }];
    await store.write(ledgerRowsSql(store.engine, more.slice(-1)));
    await assertPagesExact(store, more, 'after a correction');
    // The ledger is appended to only: on PostgreSQL an entry can be neither deleted nor moved (its counts
    // would have to follow it); on SQLite, where it can, the counts follow.
    const remove = `DELETE FROM ledger_entries WHERE sink = 'LZS' AND posting_id = 3`;
    if (store.engine === 'postgresql') {
      await assert.rejects(store.write(remove), /never deleted or re-keyed/);
      await assert.rejects(
        store.write(`UPDATE ledger_entries SET business_date = '${DAYS[0]}' WHERE posting_id = 5`),
        /never deleted or re-keyed/,
      );
      await assertPagesExact(store, more, 'after the refusals');
      return;
    }
    await store.write(remove);
    await assertPagesExact(
      store,
      more.filter((r) => !(r.sink === 'LZS' && r.postingId === 3)),
      'after a delete',
    );
  },
);

// SQLite's counts came with decision 234, and its migration's test.
onPostgres('an upgraded PostgreSQL installation counts the ledger it already had', async (_t, store) => {
  const rows = ledger();
  // The release before: no counts, no notes, no triggers.
  await store.write(`DROP TABLE ledger_entry_day_counts, ledger_entry_day_count_deltas, ledger_unpaired_versions;
    DROP FUNCTION ledger_entries_count_added() CASCADE;
    DROP TRIGGER ledger_entries_kept ON ledger_entries; DROP TRIGGER ledger_entries_keyed ON ledger_entries;`);
  await appendFirstVersionsLate(store, rows);
  await store.write(
    readFileSync(
      new URL('../../core/store/pg/migrations/029_ledger_entry_day_counts.sql', import.meta.url),
      'utf8',
    ),
  );
  await assertPagesExact(store, rows, 'after the migration');
});

test('versions of one posting appended by two sessions at once count it once (postgresql)', async (t) => {
  const { store, first, second } = await storeWithTwoSessions(t);
  const v = (version: number): LedgerRow => ({
    sink: 'LZS',
    postingId: 9,
    version,
    day: DAYS[0]!,
    amountSen: 1,
  });
  // Neither session sees the other's version until both are in: counted by what each appended, less the
  // later version found when a page is placed, the posting is still one.
  await first.query('BEGIN');
  await first.query(ledgerRowsSql('postgresql', [v(1)]));
  await second.query(`SET lock_timeout = '500ms'`);
  await second.query(ledgerRowsSql('postgresql', [v(2)]));
  await first.query('COMMIT');
  const page = await store.zakatReport.page({
    sink: 'LZS',
    start: DAYS[0]!,
    end: DAYS[0]!,
    limit: 10,
    offset: 0,
  });
  assert.equal(page.total, 1);
  assert.deepEqual(
    page.rows.map((r) => [r.postingId, r.amountSen]),
    [[9, 1]],
  );
  const deltas = await second.query<{ n: string }>('SELECT sum(n) AS n FROM ledger_entry_day_count_deltas');
  assert.equal(Number(deltas.rows[0]?.n), 2, 'each statement appended its own entry, no row shared');
  // The upkeep pairs version 2 with version 1 (-1 for the day), then folds the three rows.
  assert.equal(await store.ledger.foldDayCounts(), 3);
  for (const table of ['ledger_entry_day_count_deltas', 'ledger_unpaired_versions'])
    assert.equal((await second.query(`SELECT 1 FROM ${table}`)).rowCount, 0, `${table} emptied`);
  assert.equal(
    (await store.zakatReport.page({ sink: 'LZS', start: DAYS[0]!, end: DAYS[0]!, limit: 10, offset: 0 }))
      .total,
    1,
    'the same after the fold',
  );
});

// The total comes from the counts, not from a count of the range's entries: counts changed by hand show.
onBothEngines('a page takes its total from the day counts', async (_t, store) => {
  const rows = ledger();
  await appendFirstVersionsLate(store, rows);
  await store.ledger.foldDayCounts();
  const counts = store.engine === 'sqlite' ? 'ledger_day_counts' : 'ledger_entry_day_counts';
  await store.write(`UPDATE ${counts} SET n = n + 1000 WHERE sink = 'LZS' AND business_date = '${DAYS[1]}'`);
  const want = expected(rows, ['LZS'], DAYS[0]!, DAYS[3]!).length + 1000;
  const query = { sink: 'LZS', start: DAYS[0]!, end: DAYS[3]!, limit: 5, offset: 0 };
  assert.equal((await store.zakatReport.page(query)).total, want);
  const filter = { agency: 'LZS', firstDay: DAYS[0]!, lastDay: DAYS[3]! };
  assert.equal((await store.dashboardReads.postingsPage(filter, 5, 0)).total, want);
});
