/**
 * The dashboard overview's checkout figures per Kuala Lumpur day come from the payment day counts (decision
 * 251), which now also hold the sen of the payments they count, the failed ones and the pending ones the
 * bank is working on: the overview no longer reads every payment of its 30 days. Whatever a payment goes
 * through (created, taken to the bank, paid or refused, changed by an operator's SQL), each day's figures
 * are the payments' own, on both engines, before and after PostgreSQL's upkeep folds its appended counts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { DayFigures } from '../../core/store/index.ts';
import { onBothEngines, type EngineStore } from '../support/engines.ts';
import { AROUND_KL_MIDNIGHT, newOrder, payOrder, startPayment } from '../support/orders.ts';
import { businessDate } from '../../core/time.ts';

const INSTANTS = AROUND_KL_MIDNIGHT;
const DAYS = ['2026-11-19', '2026-11-20', '2026-11-21'];
type State = 'unpaid' | 'started' | 'success' | 'failed';
interface Made {
  orderNo: string;
  agency: string;
  day: string;
  state: State;
  amountSen: number;
}

const kl = (at: string) => businessDate(new Date(at));

/** Orders of LZS and PPZ at each instant in every state a payment can rest in. */
async function makePayments(store: EngineStore): Promise<Made[]> {
  await store.addAgency('LZS');
  await store.addAgency('PPZ');
  const made: Made[] = [];
  const states: State[] = ['unpaid', 'started', 'success', 'failed'];
  for (const [i, at] of INSTANTS.entries())
    for (const agency of ['LZS', 'PPZ'])
      for (const [j, state] of states.entries()) {
        const orderNo = `F${agency}${i}${j}`;
        const amountSen = 1000 + 100 * i + j;
        await store.orders.createOrder(
          newOrder(orderNo, { agencyCode: agency, refNo: `R-${orderNo}`, at, amountSen }),
        );
        if (state === 'started') await startPayment(store.orders, orderNo, at, 'card');
        if (state === 'success') await payOrder(store.orders, orderNo, at);
        if (state === 'failed') await payOrder(store.orders, orderNo, at, { status: 'failed', code: '51' });
        made.push({ orderNo, agency, day: kl(at), state, amountSen });
      }
  return made;
}

/** The model: each day of the range, from the payments as they are. */
function expected(made: readonly Made[], agency: string, first: string, last: string): DayFigures[] {
  return DAYS.filter((d) => d >= first && d <= last).map((day) => {
    const of = made.filter((m) => m.agency === agency && m.day === day);
    const paid = of.filter((m) => m.state === 'success');
    return {
      day,
      collected: { count: paid.length, sumSen: paid.reduce((sum, m) => sum + m.amountSen, 0) },
      pending: of.filter((m) => m.state === 'started').length,
      failed: of.filter((m) => m.state === 'failed').length,
      exceptions: 0,
    };
  });
}

async function assertOverviewExact(store: EngineStore, made: readonly Made[], when: string) {
  for (const agency of ['LZS', 'PPZ'])
    for (const [first, last] of [
      [DAYS[0]!, DAYS[2]!],
      [DAYS[1]!, DAYS[1]!],
    ] as const)
      assert.deepEqual(
        (await store.dashboardReads.overview(agency, first, last)).days,
        expected(made, agency, first, last),
        `${when}: ${agency} ${first}..${last}`,
      );
}

onBothEngines('the overview counts each day’s payments by state, and their sen', async (_t, store) => {
  const made = await makePayments(store);
  await assertOverviewExact(store, made, 'as paid');
  await store.orders.foldDayCounts();
  await assertOverviewExact(store, made, 'after a fold');
  // An operator's SQL: a paid order reversed to failed, a refused one's amount corrected, a started one
  // taken back from the bank (no acquirer reference), a payment removed, an order moved a day.
  const change = (orderNo: string, state: State, amountSen?: number, day?: string) => {
    const m = made.find((x) => x.orderNo === orderNo)!;
    Object.assign(m, { state, amountSen: amountSen ?? m.amountSen, day: day ?? m.day });
  };
  await store.write(`UPDATE payments SET status = 'failed' WHERE order_no = 'FLZS22'`);
  change('FLZS22', 'failed');
  await store.write(`UPDATE payments SET amount_sen = 5000, status = 'success' WHERE order_no = 'FLZS33'`);
  change('FLZS33', 'success', 5000);
  await store.write(`UPDATE payments SET acquirer_ref = NULL WHERE order_no = 'FLZS21'`);
  change('FLZS21', 'unpaid');
  await store.write(`UPDATE payments SET created_at = '2026-11-19T02:00:00.000Z' WHERE order_no = 'FLZS42'`);
  change('FLZS42', 'success', undefined, '2026-11-19');
  await store.write(
    `DELETE FROM payment_events WHERE order_no = 'FLZS13'; DELETE FROM callbacks WHERE order_no = 'FLZS13';
     DELETE FROM payments WHERE order_no = 'FLZS13'`,
  );
  made.splice(
    made.findIndex((m) => m.orderNo === 'FLZS13'),
    1,
  );
  await assertOverviewExact(store, made, 'after changes by SQL');
  await store.orders.foldDayCounts();
  await assertOverviewExact(store, made, 'after the changes are folded');
});

// The figures come from the counts, not from the payments: figures changed by hand show.
onBothEngines('a day’s checkout figures are read from the day counts', async (_t, store) => {
  const made = await makePayments(store);
  await store.orders.foldDayCounts();
  await store.write(`UPDATE payment_day_counts SET sum_sen = sum_sen + 7, failed_n = failed_n + 1000,
    started_n = started_n + 100 WHERE agency_code = 'LZS' AND day = '${DAYS[0]}' AND approved = 1`);
  const want = expected(made, 'LZS', DAYS[0]!, DAYS[2]!).map((d) =>
    d.day === DAYS[0]
      ? {
          ...d,
          collected: { ...d.collected, sumSen: d.collected.sumSen + 7 },
          failed: d.failed + 1000,
          pending: d.pending + 100,
        }
      : d,
  );
  assert.deepEqual((await store.dashboardReads.overview('LZS', DAYS[0]!, DAYS[2]!)).days, want);
});

// SQLite's migration 031 and PostgreSQL's 032 figure the payments an installation already holds.
onBothEngines('an upgraded installation figures the payments it already had', async (_t, store) => {
  const made = await makePayments(store);
  await store.orders.foldDayCounts();
  const migration = (dir: string, name: string) =>
    readFileSync(new URL(`../../core/store/${dir}/migrations/${name}`, import.meta.url), 'utf8');
  // The release before: counts of payments without their figures (on SQLite, migration 026's table and
  // triggers, rebuilt from the payments).
  if (store.engine === 'sqlite') {
    await store.write(migration('sqlite', '026_payment_day_counts_by_method.sql'));
    await store.write(migration('sqlite', '031_payment_day_figures.sql'));
  } else {
    await store.write(
      ['sum_sen', 'failed_n', 'started_n']
        .map(
          (c) =>
            `ALTER TABLE payment_day_counts DROP COLUMN ${c}; ALTER TABLE payment_day_count_deltas DROP COLUMN ${c};`,
        )
        .join(' '),
    );
    await store.write(migration('pg', '032_payment_day_figures.sql'));
  }
  await assertOverviewExact(store, made, 'after the migration');
});
