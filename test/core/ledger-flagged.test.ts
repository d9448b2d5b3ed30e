/**
 * The dashboard's postings filtered by exception code, and the code filter's choices, read the flagged
 * entries through their own partial index (decision 249): the same rows as before, and a plan that never
 * walks the unflagged entries of the days asked for.
 */
import assert from 'node:assert/strict';
import { FLAGGED_POSTINGS_COUNT_SQL } from '../../core/store/sqlite/dashboard-reads.ts';
import { POSTINGS_BY_CODE } from '../../core/store/pg/dashboard-reads.ts';
import { onBothEngines } from '../support/engines.ts';
import { ledgerRowsSql, type LedgerRow } from '../support/ledger-rows.ts';

const DAYS = ['2026-11-18', '2026-11-19', '2026-11-20'];

/**
 * 60 postings of LZS over three days; every fifth flagged E1 or E2, and one of those corrected by a second
 * version without codes (its latest version is not flagged).
 */
function ledger(): LedgerRow[] {
  const rows: LedgerRow[] = [];
  for (let posting = 1; posting <= 60; posting += 1) {
    const flagged = posting % 5 === 0 ? (posting % 10 === 0 ? '["E2"]' : '["E1","E2"]') : '[]';
    const day = DAYS[posting % DAYS.length]!;
    rows.push({ sink: 'LZS', postingId: posting, version: 1, day, amountSen: 100, exceptions: flagged });
    if (posting === 15) rows.push({ sink: 'LZS', postingId: posting, version: 2, day, amountSen: 100 });
  }
  rows.push({ sink: 'PPZ', postingId: 100, version: 1, day: DAYS[0]!, amountSen: 1, exceptions: '["E1"]' });
  return rows;
}

/** The model: LZS's latest versions carrying `code` ('any': any code), by day then posting. */
function expected(rows: readonly LedgerRow[], code: string): number[] {
  const latest = new Map<number, LedgerRow>();
  for (const row of rows)
    if (row.sink === 'LZS' && (latest.get(row.postingId)?.version ?? 0) < row.version)
      latest.set(row.postingId, row);
  return [...latest.values()]
    .filter((r) => {
      const codes = JSON.parse(r.exceptions ?? '[]') as string[];
      return code === 'any' ? codes.length > 0 : codes.includes(code);
    })
    .sort((a, b) => (a.day !== b.day ? (a.day < b.day ? -1 : 1) : a.postingId - b.postingId))
    .map((r) => r.postingId);
}

onBothEngines('postings filtered by code are the flagged latest versions, paged', async (_t, store) => {
  const rows = ledger();
  await store.write(ledgerRowsSql(store.engine, rows));
  const range = { agency: 'LZS', firstDay: DAYS[0]!, lastDay: DAYS[2]! };
  for (const code of ['any', 'E1', 'E2', 'E9']) {
    const want = expected(rows, code);
    const seen: number[] = [];
    for (let offset = 0; offset <= want.length; offset += 4) {
      const page = await store.dashboardReads.postingsPage({ ...range, code }, 4, offset);
      assert.equal(page.total, want.length, `${code} @${offset}`);
      seen.push(...page.rows.map((r) => r.postingId));
    }
    assert.deepEqual(seen, want, code);
  }
  const anyPage = await store.dashboardReads.postingsPage({ ...range, code: 'any' }, 50, 0);
  const listed = anyPage.rows.map((r) => r.postingId);
  assert.ok(
    listed.includes(10) && !listed.includes(15),
    'a flagged posting corrected without codes is not listed',
  );
  assert.deepEqual(await store.dashboardReads.postingCodes(range), ['E1', 'E2']);
  const oneDay = { agency: 'LZS', firstDay: DAYS[1]!, lastDay: DAYS[1]! };
  const e1 = expected(rows, 'E1').filter((p) => p % DAYS.length === 1);
  assert.deepEqual(
    (await store.dashboardReads.postingsPage({ ...oneDay, code: 'E1' }, 50, 0)).rows.map((r) => r.postingId),
    e1,
  );
});

onBothEngines('the code filter reads the flagged entries through their index', async (_t, store) => {
  if (store.engine === 'sqlite') {
    const text = FLAGGED_POSTINGS_COUNT_SQL.replace(/@(\w+)/g, (_m, key: string) =>
      key === 'agency'
        ? "'LZS'"
        : key === 'code'
          ? "'any'"
          : key === 'firstDay'
            ? "'2026-01-01'"
            : "'2026-12-31'",
    );
    const plan = (await store.sql<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`)).map((r) => r.detail);
    assert.match(
      plan[0] ?? '',
      /USING (COVERING )?INDEX ledger_flagged \(sink=\? AND business_date>\? AND business_date<\?\)/,
      plan.join(' | '),
    );
    return;
  }
  // Enough unflagged entries that walking them would show in the plan's estimate, and statistics of them.
  await store.write(`INSERT INTO ledger_entries (sink, posting_id, version, business_date, received_date,
      is_adjustment, status, amount_sen, exceptions, created_at, received_at)
    SELECT 'LZS', i, 1, '2026-11-' || lpad((1 + i % 28)::text, 2, '0'), '2026-11-01', 0, 'success', 100,
      CASE WHEN i % 500 = 0 THEN '["E1"]' ELSE '[]' END, now(), now()
    FROM generate_series(1, 50000) i;
    ANALYZE ledger_entries;`);
  const values: Record<string, string> = {
    '1': "'LZS'",
    '2': "'2026-11-01'",
    '3': "'2026-11-30'",
    '4': "'any'",
  };
  for (const text of [
    POSTINGS_BY_CODE.count.text,
    POSTINGS_BY_CODE.page.text.replace(/\$5/g, '50').replace(/\$6/g, '0'),
  ]) {
    const plan = (
      await store.sql<{ 'QUERY PLAN': string }>(
        `EXPLAIN ${text.replace(/\$([1-4])\b/g, (_m, n: string) => values[n]!)}`,
      )
    ).map((r) => r['QUERY PLAN']);
    assert.ok(
      plan.some((line) => /ledger_flagged on ledger_entries l\b/.test(line)),
      plan.join('\n'),
    );
  }
});
