/**
 * The dashboard's payments page takes its total from the day counts the payment report already keeps
 * (decision 240), unless a filter the counts do not hold (order number, reference, method) narrows it; on
 * SQLite the postings page likewise from `ledger_day_counts` when no field filters it. A year of a million
 * payments took 105 ms per page to count on SQLite's one thread. The totals must stay exactly the rows'.
 */
import assert from 'node:assert/strict';
import { onBothEngines, onSqlite } from '../support/engines.ts';
import { newOrder, payOrder } from '../support/orders.ts';
import { PAYMENT_TOTAL_SQL, POSTING_TOTAL_SQL } from '../../core/store/sqlite/dashboard-reads.ts';
import { ledgerRowsSql } from '../support/ledger-rows.ts';

// Instants on either side of Kuala Lumpur's midnight (UTC+8): 2026-11-19T16:00Z is the 20th there.
const INSTANTS = [
  '2026-11-19T15:59:59.000Z',
  '2026-11-19T16:00:00.000Z',
  '2026-11-20T02:00:00.000Z',
  '2026-11-20T15:59:59.999Z',
  '2026-11-20T16:00:00.000Z',
  '2026-11-22T01:00:00.000Z',
];

onBothEngines('the payments page total is the count of the rows, under every filter', async (_t, store) => {
  await store.addAgency('LZS');
  await store.addAgency('PPZ');
  const made: { orderNo: string; agency: string; at: string; approved: boolean; method: string | null }[] =
    [];
  for (const [i, at] of INSTANTS.entries()) {
    for (const agency of ['LZS', 'PPZ']) {
      const orderNo = `T${agency}${i}`;
      await store.orders.createOrder(newOrder(orderNo, { agencyCode: agency, refNo: `R-${orderNo}`, at }));
      // Every other order paid (its method fpx), one in three refused, the rest left pending.
      const approved = i % 2 === 0;
      if (approved) await payOrder(store.orders, orderNo, at);
      else if (i % 3 === 1) await payOrder(store.orders, orderNo, at, { status: 'failed', code: '51' });
      made.push({ orderNo, agency, at, approved, method: approved || i % 3 === 1 ? 'fpx' : null });
    }
  }
  const kl = (at: string) => new Date(Date.parse(at) + 8 * 3600_000).toISOString().slice(0, 10);
  const ranges: [string, string][] = [
    ['2026-11-19', '2026-11-19'],
    ['2026-11-20', '2026-11-20'],
    ['2026-11-19', '2026-11-21'],
    ['2026-11-21', '2026-11-22'],
    ['0001-01-01', '9999-12-31'],
  ];
  for (const [firstDay, lastDay] of ranges)
    for (const approved of [undefined, true, false])
      for (const extra of [{}, { orderNo: 'TLZS2' }, { refNo: 'R-TLZS1' }, { method: 'fpx' }] as const) {
        const filter = {
          agency: 'LZS',
          firstDay,
          lastDay,
          ...(approved !== undefined && { approved }),
          ...extra,
        };
        const want = made.filter(
          (m) =>
            m.agency === 'LZS' &&
            kl(m.at) >= firstDay &&
            kl(m.at) <= lastDay &&
            (approved === undefined || m.approved === approved) &&
            (!('orderNo' in extra) || m.orderNo === extra.orderNo) &&
            (!('refNo' in extra) || `R-${m.orderNo}` === extra.refNo) &&
            (!('method' in extra) || m.method === extra.method),
        ).length;
        const page = await store.dashboardReads.paymentsPage(filter, 2, 0);
        assert.equal(page.total, want, JSON.stringify(filter));
        assert.equal(page.rows.length, Math.min(2, want), JSON.stringify(filter));
      }
});

onSqlite('SQLite counts the unfiltered payments page from the day counts', async (_t, store) => {
  const text = PAYMENT_TOTAL_SQL.replace(/@(\w+)/g, (_m, key: string) =>
    key === 'agency'
      ? "'LZS'"
      : key === 'approved'
        ? 'NULL'
        : key === 'firstDay'
          ? "'2026-01-01'"
          : "'2026-12-31'",
  );
  const plan = (await store.sql<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`))
    .map((r) => r.detail)
    .join(' | ');
  assert.match(
    plan,
    /SEARCH payment_day_counts USING PRIMARY KEY \(agency_code=\? AND day>\? AND day<\?\)/,
    plan,
  );
});

onBothEngines(
  'the postings page total counts each posting once, at its latest version',
  async (_t, store) => {
    const entries: [string, number, number, string, string][] = [
      ['LZS', 1, 1, '2026-11-19', '[]'],
      ['LZS', 2, 1, '2026-11-19', '["E1"]'],
      ['LZS', 2, 2, '2026-11-20', '[]'],
      ['LZS', 3, 1, '2026-11-20', '[]'],
      ['LZS', 4, 1, '2026-11-21', '["E2"]'],
      ['PPZ', 5, 1, '2026-11-20', '[]'],
    ];
    const rows = entries.map(([sink, postingId, version, day, exceptions]) => ({
      sink,
      postingId,
      version,
      day,
      exceptions,
      amountSen: 100,
    }));
    await store.write(ledgerRowsSql(store.engine, rows));
    for (const [firstDay, lastDay, all, flagged] of [
      ['2026-11-19', '2026-11-19', 1, 0],
      ['2026-11-20', '2026-11-20', 2, 0],
      ['2026-11-19', '2026-11-21', 4, 1],
      ['0001-01-01', '9999-12-31', 4, 1],
    ] as const) {
      const page = await store.dashboardReads.postingsPage({ agency: 'LZS', firstDay, lastDay }, 2, 0);
      assert.equal(page.total, all, `${firstDay}..${lastDay}`);
      const any = await store.dashboardReads.postingsPage(
        { agency: 'LZS', firstDay, lastDay, code: 'any' },
        2,
        0,
      );
      assert.equal(any.total, flagged, `${firstDay}..${lastDay} flagged`);
    }
    if (store.engine !== 'sqlite') return;
    const text = POSTING_TOTAL_SQL.replace(/@(\w+)/g, (_m, key: string) =>
      key === 'agency' ? "'LZS'" : key === 'firstDay' ? "'2026-01-01'" : "'2026-12-31'",
    );
    const plan = (await store.sql<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`))
      .map((r) => r.detail)
      .join(' | ');
    assert.match(
      plan,
      /SEARCH ledger_day_counts USING PRIMARY KEY \(sink=\? AND business_date>\? AND business_date<\?\)/,
      plan,
    );
  },
);
