/**
 * The dashboard overview's days come from each agency's ledger figures per business day (decision 251):
 * on SQLite kept by the ledger's triggers in the append's own transaction; on PostgreSQL recomputed for a
 * day when the upkeep folds its appended counts, and a day with counts not yet folded read from the ledger
 * itself. Whatever order versions come in, and however sessions interleave, a day's figures are the
 * model's: each posting once, at its latest version in its agency's ledger.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { DayFigures, Store } from '../../core/store/index.ts';
import { onBothEngines, onPostgres } from '../support/engines.ts';
import { appendFirstVersionsLate, ledgerRowsSql, type LedgerRow } from '../support/ledger-rows.ts';
import { storeWithTwoSessions } from '../support/pg-stores.ts';

const DAYS = ['2026-11-18', '2026-11-19', '2026-11-20', '2026-11-21'];
const FLAGGED = '["E01"]';

/**
 * Postings of LZS and PPZ over four days: most in one version, some pending then paid then reversed, some
 * whose first version is appended after their second; codes on some versions and not on others.
 */
function ledger(): LedgerRow[] {
  const rows: LedgerRow[] = [];
  const statuses = ['success', 'pending', 'failed'] as const;
  for (let posting = 1; posting <= 48; posting += 1) {
    const sink = posting % 3 === 0 ? 'PPZ' : 'LZS';
    const day = DAYS[posting % DAYS.length]!;
    const chain: LedgerRow['status'][] =
      posting % 5 === 0 ? ['pending', 'success', 'failed'] : posting % 7 === 0 ? ['pending', 'success'] : [];
    const versions = chain.length > 0 ? chain : [statuses[Math.floor(posting / 3) % 3]];
    versions.forEach((status, i) => {
      const version = i + 1;
      const exceptions = (posting + version) % 3 === 0 ? FLAGGED : undefined;
      rows.push({
        sink,
        postingId: posting,
        version,
        day,
        status,
        amountSen: posting * 100 + version,
        exceptions,
      });
    });
  }
  return rows;
}

/** The model: each day of the range, its postings at their latest version in the agency's ledger. */
function expected(rows: readonly LedgerRow[], agency: string, first: string, last: string): DayFigures[] {
  const latest = new Map<number, LedgerRow>();
  for (const row of rows)
    if (row.sink === agency && (latest.get(row.postingId)?.version ?? 0) < row.version)
      latest.set(row.postingId, row);
  const days: DayFigures[] = [];
  for (const day of DAYS.filter((d) => d >= first && d <= last)) {
    const of = [...latest.values()].filter((r) => r.day === day);
    const paid = of.filter((r) => (r.status ?? 'success') === 'success');
    days.push({
      day,
      collected: { count: paid.length, sumSen: paid.reduce((sum, r) => sum + r.amountSen, 0) },
      pending: of.filter((r) => r.status === 'pending').length,
      failed: of.filter((r) => r.status === 'failed').length,
      exceptions: of.filter((r) => r.exceptions !== undefined).length,
    });
  }
  return days;
}

async function assertOverviewExact(store: Store, rows: readonly LedgerRow[], when: string) {
  for (const agency of ['LZS', 'PPZ'])
    for (const [first, last] of [
      [DAYS[0]!, DAYS[3]!],
      [DAYS[1]!, DAYS[2]!],
      [DAYS[3]!, DAYS[3]!],
    ] as const) {
      const { days } = await store.dashboardReads.overview(agency, first, last);
      assert.deepEqual(days, expected(rows, agency, first, last), `${when}: ${agency} ${first}..${last}`);
    }
}

onBothEngines('the overview is the model on every day, versions in any order', async (_t, store) => {
  const rows = ledger();
  assert.ok(
    expected(rows, 'LZS', DAYS[0]!, DAYS[3]!).every((d) => d.collected.count && d.pending && d.exceptions),
    'every day of the model has payments, pending postings and codes to get wrong',
  );
  await appendFirstVersionsLate(store, rows);
  await assertOverviewExact(store, rows, 'after the appends');
  await store.ledger.foldDayCounts();
  await assertOverviewExact(store, rows, 'after a fold');
  // Paid, then a later version of it failed: the day loses a payment and its sen, and gains a failure.
  const more: LedgerRow[] = [
    ...rows,
    {
      sink: 'LZS',
      postingId: 1,
      version: 2,
      day: DAYS[1]!,
      status: 'failed',
      amountSen: 101,
      exceptions: FLAGGED,
    },
  ];
  await store.write(ledgerRowsSql(store.engine, more.slice(-1)));
  await assertOverviewExact(store, more, 'after a correction');
  await store.ledger.foldDayCounts();
  await assertOverviewExact(store, more, 'after the correction is folded');
  if (store.engine === 'postgresql') return; // its ledger is appended to only (decision 248)
  await store.write(`DELETE FROM ledger_entries WHERE sink = 'LZS' AND posting_id = 1 AND version = 2`);
  await store.write(`DELETE FROM ledger_entries WHERE sink = 'LZS' AND posting_id = 3`);
  await assertOverviewExact(
    store,
    rows.filter((r) => !(r.sink === 'LZS' && r.postingId === 3)),
    'after deletes',
  );
});

// The days come from the stored figures, not from a count of the ledger: figures changed by hand show. On
// PostgreSQL a day with appended counts not yet folded is read from the ledger, so figures changed by hand
// there do not show until the upkeep has recomputed them.
onBothEngines('a day folded is read from its stored figures', async (_t, store) => {
  const rows = ledger();
  await appendFirstVersionsLate(store, rows);
  await store.ledger.foldDayCounts();
  const figures = store.engine === 'sqlite' ? 'ledger_day_counts' : 'ledger_day_figures';
  const bump = `UPDATE ${figures} SET success_n = success_n + 1000, success_sen = success_sen + 7
    WHERE sink = 'LZS' AND business_date = '${DAYS[1]}'`;
  await store.write(bump);
  const model = expected(rows, 'LZS', DAYS[0]!, DAYS[3]!);
  const bumped = model.map((d) =>
    d.day === DAYS[1]
      ? { ...d, collected: { count: d.collected.count + 1000, sumSen: d.collected.sumSen + 7 } }
      : d,
  );
  assert.deepEqual((await store.dashboardReads.overview('LZS', DAYS[0]!, DAYS[3]!)).days, bumped);
  if (store.engine === 'sqlite') return;
  // An entry appended on that day makes it read from the ledger until the next fold recomputes it.
  const late: LedgerRow = { sink: 'LZS', postingId: 500, version: 1, day: DAYS[1]!, amountSen: 5 };
  await store.write(ledgerRowsSql(store.engine, [late]));
  await assertOverviewExact(store, [...rows, late], 'a day with appended counts');
  // The fold's statement is the release before's: the figures follow any deletion of the appended counts.
  await store.ledger.foldDayCounts();
  await assertOverviewExact(store, [...rows, late], 'recomputed by the fold');
});

test('versions of one posting appended by two sessions at once (postgresql)', async (t) => {
  const { store, first, second } = await storeWithTwoSessions(t);
  const v = (version: number, status: LedgerRow['status']): LedgerRow => ({
    sink: 'LZS',
    postingId: 9,
    version,
    day: DAYS[0]!,
    status,
    amountSen: 250,
  });
  await first.query('BEGIN');
  await first.query(ledgerRowsSql('postgresql', [v(1, 'pending')]));
  await second.query(`SET lock_timeout = '500ms'`);
  await second.query(ledgerRowsSql('postgresql', [v(2, 'success')]));
  await first.query('COMMIT');
  const want = [
    { day: DAYS[0]!, collected: { count: 1, sumSen: 250 }, pending: 0, failed: 0, exceptions: 0 },
  ];
  assert.deepEqual((await store.dashboardReads.overview('LZS', DAYS[0]!, DAYS[0]!)).days, want);
  await store.ledger.foldDayCounts();
  assert.deepEqual((await store.dashboardReads.overview('LZS', DAYS[0]!, DAYS[0]!)).days, want, 'folded');
});

// SQLite's migration 030 and PostgreSQL's 031 figure the ledger an installation already holds.
onBothEngines('an upgraded installation figures the ledger it already had', async (_t, store) => {
  const rows = ledger();
  await appendFirstVersionsLate(store, rows);
  await store.ledger.foldDayCounts();
  if (store.engine === 'postgresql') {
    await store.write(`DROP TABLE ledger_day_figures; DROP FUNCTION ledger_day_figures_refresh() CASCADE;`);
    await store.write(
      readFileSync(
        new URL('../../core/store/pg/migrations/031_ledger_day_figures.sql', import.meta.url),
        'utf8',
      ),
    );
  } else {
    // The release before: day counts without figures, kept by the triggers of migrations 020 and 028.
    const migration = (name: string) =>
      readFileSync(new URL(`../../core/store/sqlite/migrations/${name}`, import.meta.url), 'utf8');
    const before = migration('020_ledger_day_counts.sql');
    await store.write(`DROP TRIGGER ledger_day_count; DROP TRIGGER ledger_day_count_delete;
      ALTER TABLE ledger_day_counts DROP COLUMN success_n; ALTER TABLE ledger_day_counts DROP COLUMN success_sen;
      ALTER TABLE ledger_day_counts DROP COLUMN pending_n; ALTER TABLE ledger_day_counts DROP COLUMN failed_n;
      ALTER TABLE ledger_day_counts DROP COLUMN flagged_n;
      ${before.slice(before.indexOf('CREATE TRIGGER'))} ${migration('028_ledger_day_count_on_delete.sql')}`);
    await store.write(migration('030_ledger_day_figures.sql'));
  }
  await assertOverviewExact(store, rows, 'after the migration');
});

// Kept honest: the PostgreSQL figures are where the test above looks for them.
onPostgres('the figures table holds a row for each agency and day folded', async (_t, store) => {
  await appendFirstVersionsLate(store, ledger());
  await store.ledger.foldDayCounts();
  const rows = await store.sql<{ n: string }>('SELECT count(*) AS n FROM ledger_day_figures');
  assert.equal(Number(rows[0]?.n), 8);
});
