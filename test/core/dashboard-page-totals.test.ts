/**
 * The dashboard's payments page takes its total from the day counts the payment report already keeps
 * (decision 240), which hold each payment's method too (decision 243), unless the order number or the
 * reference narrows it; on SQLite the postings page likewise from `ledger_day_counts` when no field filters
 * it. A year of a million payments took 105 ms per page to count on SQLite's one thread. The totals must
 * stay exactly the rows'.
 */
import assert from 'node:assert/strict';
import { onBothEngines, onSqlite } from '../support/engines.ts';
import { AROUND_KL_MIDNIGHT, newOrder, payOrder, startPayment } from '../support/orders.ts';
import { businessDate } from '../../core/time.ts';
import { PAYMENT_TOTAL_SQL } from '../../core/store/sqlite/dashboard-reads.ts';
import { ledgerRowsSql } from '../support/ledger-rows.ts';

const INSTANTS = [...AROUND_KL_MIDNIGHT, '2026-11-22T01:00:00.000Z'];

onBothEngines('the payments page total is the count of the rows, under every filter', async (_t, store) => {
  await store.addAgency('LZS');
  await store.addAgency('PPZ');
  const made: { orderNo: string; agency: string; at: string; approved: boolean; method: string | null }[] =
    [];
  for (const [i, at] of INSTANTS.entries()) {
    for (const agency of ['LZS', 'PPZ']) {
      const orderNo = `T${agency}${i}`;
      await store.orders.createOrder(newOrder(orderNo, { agencyCode: agency, refNo: `R-${orderNo}`, at }));
      // Every other order paid (its method fpx), one in three refused, the rest left pending: of those, one
      // in two taken to the bank by card, and one of them then moved to e-wallet through SQL (the counts
      // follow any change of a payment's method, not only the first).
      const approved = i % 2 === 0;
      let method: string | null = approved || i % 3 === 1 ? 'fpx' : null;
      if (approved) await payOrder(store.orders, orderNo, at);
      else if (i % 3 === 1) await payOrder(store.orders, orderNo, at, { status: 'failed', code: '51' });
      else if ((i + made.length) % 2 === 1) {
        await startPayment(store.orders, orderNo, at, 'card');
        method = 'card';
        if (i === 3) {
          await store.write(`UPDATE payments SET payment_method = 'ewallet' WHERE order_no = '${orderNo}'`);
          method = 'ewallet';
        }
      }
      made.push({ orderNo, agency, at, approved, method });
    }
  }
  // Each method has orders to count, else a total of 0 would prove nothing.
  for (const method of ['fpx', 'card', 'ewallet'])
    assert.ok(
      made.some((m) => m.agency === 'LZS' && m.method === method),
      method,
    );
  const kl = (at: string) => businessDate(new Date(at));
  const ranges: [string, string][] = [
    ['2026-11-19', '2026-11-19'],
    ['2026-11-20', '2026-11-20'],
    ['2026-11-19', '2026-11-21'],
    ['2026-11-21', '2026-11-22'],
    ['0001-01-01', '9999-12-31'],
  ];
  for (const [firstDay, lastDay] of ranges)
    for (const approved of [undefined, true, false])
      // prettier-ignore
      for (const extra of [{}, { orderNo: 'TLZS2' }, { refNo: 'R-TLZS1' }, { method: 'fpx' }, { method: 'card' },
        { method: 'ewallet' }, { method: 'card', refNo: 'R-TLZS3' }] as const) {
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

onSqlite(
  'SQLite counts the payments page filtered by days, approval and method from the day counts',
  async (_t, store) => {
    const params: Record<string, string> = {
      agency: "'LZS'",
      approved: '1',
      method: "'card'",
      firstDay: "'2026-01-01'",
      lastDay: "'2026-12-31'",
    };
    const text = PAYMENT_TOTAL_SQL.replace(/@(\w+)/g, (_m, key: string) => params[key]!);
    const plan = (await store.sql<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`))
      .map((r) => r.detail)
      .join(' | ');
    assert.match(
      plan,
      /SEARCH payment_day_counts USING PRIMARY KEY \(agency_code=\? AND day>\? AND day<\?\)/,
      plan,
    );
  },
);

onBothEngines(
  'the postings page total counts each posting once, at its latest version',
  async (_t, store) => {
    // A posting's versions carry its business day (the normalise job keeps the first version's): posting 2
    // was flagged, then corrected.
    const entries: [string, number, number, string, string][] = [
      ['LZS', 1, 1, '2026-11-19', '[]'],
      ['LZS', 2, 1, '2026-11-20', '["E1"]'],
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
    // Each page of two, at any depth, is the next two of the latest versions in order.
    const pages = [];
    for (const offset of [0, 2, 4]) {
      const page = await store.dashboardReads.postingsPage(
        { agency: 'LZS', firstDay: '2026-11-01', lastDay: '2026-11-30' },
        2,
        offset,
      );
      pages.push(...page.rows.map((r) => r.postingId));
    }
    assert.deepEqual(pages, [1, 2, 3, 4]);
  },
);

onBothEngines(
  "the payments page filtered by method counts from the day counts, not the agency's payments",
  async (_t, store) => {
    await store.addAgency('LZS');
    const at = '2026-11-20T02:00:00.000Z';
    await store.orders.createOrder(newOrder('M1', { agencyCode: 'LZS', at }));
    await startPayment(store.orders, 'M1', at, 'card');
    const filter = { agency: 'LZS', firstDay: '2026-11-20', lastDay: '2026-11-20', method: 'card' as const };
    assert.equal((await store.dashboardReads.paymentsPage(filter, 10, 0)).total, 1);
    // The counts say a thousand more: a total read from them says so too, a count of the payments would not.
    // (On PostgreSQL the payment's count is first folded in from the row it appended: decision 246.)
    const folded = await store.orders.foldDayCounts();
    assert.ok(store.engine === 'postgresql' ? folded > 0 : folded === 0, `${folded} rows folded`);
    assert.equal((await store.dashboardReads.paymentsPage(filter, 10, 0)).total, 1);
    await store.write(
      `UPDATE payment_day_counts SET n = n + 1000 WHERE agency_code = 'LZS' AND method = 'card'`,
    );
    assert.equal((await store.dashboardReads.paymentsPage(filter, 10, 0)).total, 1001);
    const byRef = { ...filter, refNo: 'nothing-has-this' };
    assert.equal((await store.dashboardReads.paymentsPage(byRef, 10, 0)).total, 0);
  },
);
