/**
 * The dashboard's callbacks page reads what it shows (decision 239). It used to count and sort every callback
 * of the agency at each view: 1.1 to 1.5 s with a million on SQLite's one thread. Now the failing callbacks
 * come from the state index, the rest from the agency's own index range, newest first, and SQLite's counts
 * from `callback_counts`, kept by triggers. The page must still be exactly what the one sorted query gave:
 * failing first, then newest first, under every filter and at every offset.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { onBothEngines, onSqlite, type EngineStore } from '../support/engines.ts';
import { newOrder, payOrder } from '../support/orders.ts';
import { CALLBACK_PAGE_SQL } from '../../core/store/sqlite/dashboard-reads.ts';
import type { CallbackState } from '../../core/store/dashboard-reads.ts';

const AT = '2026-11-20T02:00:00.000Z';
const STATES = ['queued', 'delivered', 'superseded', 'dead', 'gone'] as const;
const FILTERS = [undefined, 'failing', ...STATES] as const;

interface Model {
  id: number;
  agency: string;
  state: CallbackState;
  attempts: number;
}

const failing = (c: Model) =>
  c.state === 'dead' || c.state === 'gone' || (c.state === 'queued' && c.attempts > 0);

/** A paid order of `agency`: its callback queued. */
async function paidOrder(store: EngineStore, agency: string, orderNo: string): Promise<string> {
  await store.orders.createOrder(
    newOrder(orderNo, { agencyCode: agency, refNo: `REF-${orderNo}`, returnUrl: 'https://m.example/cb' }),
  );
  await payOrder(store.orders, orderNo, AT);
  return orderNo;
}

/** Callbacks of two agencies in the given states, written as the store writes them, then moved to a state. */
async function seed(store: EngineStore, specs: readonly [string, CallbackState, number][]): Promise<Model[]> {
  const models: Model[] = [];
  for (const [i, [agency, state, attempts]] of specs.entries()) {
    const orderNo = await paidOrder(store, agency, `${agency}-${i}`);
    const [callback] = await store.callbacks.ofOrder(orderNo);
    // Through SQL, as a finish leaves it: the triggers see an update of state and attempts.
    await store.write(
      `UPDATE callbacks SET state = '${state}', attempts = ${attempts} WHERE id = ${callback!.id}`,
    );
    models.push({ id: callback!.id, agency, state, attempts });
  }
  return models;
}

/** What the page must show: the one sorted query's answer over the model. */
function expected(
  models: readonly Model[],
  agency: string,
  filter: (typeof FILTERS)[number],
  limit: number,
  offset: number,
) {
  const of = models.filter(
    (c) =>
      c.agency === agency &&
      (filter === undefined || (filter === 'failing' ? failing(c) : c.state === filter)),
  );
  of.sort((a, b) => Number(failing(b)) - Number(failing(a)) || b.id - a.id);
  const byState: Record<string, number> = { failing: 0 };
  for (const c of models.filter((m) => m.agency === agency)) {
    byState[c.state] = (byState[c.state] ?? 0) + 1;
    if (failing(c)) byState.failing! += 1;
  }
  return { ids: of.slice(offset, offset + limit).map((c) => c.id), total: of.length, byState };
}

onBothEngines('every page of every filter is the failing first, then the newest', async (_t, store) => {
  await store.addAgency('LZS');
  await store.addAgency('PPZ');
  const spec = fc.array(
    fc.tuple(fc.constantFrom('LZS', 'PPZ'), fc.constantFrom(...STATES), fc.integer({ min: 0, max: 6 })),
    { minLength: 20, maxLength: 20 },
  );
  const [specs] = fc.sample(spec, { seed: 239, numRuns: 1 });
  const models = await seed(store, specs!);
  for (const agency of ['LZS', 'PPZ']) {
    // The overview's count of failing callbacks is the agency's own (decision 242).
    const overview = await store.dashboardReads.overview(agency, '2026-11-20', '2026-11-20');
    const failingOfAgency = models.filter((m) => m.agency === agency && failing(m)).length;
    assert.ok(failingOfAgency > 0, agency);
    assert.equal(overview.callbacksFailing, failingOfAgency, `${agency} overview`);
    for (const filter of FILTERS)
      for (const offset of [0, 2, 3, 5, 9, 30]) {
        const page = await store.dashboardReads.callbacksPage(
          { agency, ...(filter !== undefined && { state: filter }) },
          3,
          offset,
        );
        const want = expected(models, agency, filter, 3, offset);
        const where = `${agency} ${filter ?? 'all'} at ${offset}`;
        assert.deepEqual(
          page.rows.map((r) => r.id),
          want.ids,
          where,
        );
        assert.deepEqual(
          page.rows.map((r) => r.failing),
          want.ids.map((id) => failing(models.find((m) => m.id === id)!)),
          where,
        );
        assert.equal(page.total, want.total, where);
        for (const [state, n] of Object.entries(want.byState))
          assert.equal(page.byState[state] ?? 0, n, `${where}: ${state}`);
        assert.ok(
          page.rows.every((r) => r.agencyCode === agency),
          where,
        );
      }
  }
});

onBothEngines("a callback carries its order's agency from the moment it is queued", async (_t, store) => {
  await store.addAgency('PPZ');
  const orderNo = await paidOrder(store, 'PPZ', 'PPZ-1');
  const rows = await store.sql<{ agency_code: string }>(
    `SELECT agency_code FROM callbacks WHERE order_no = '${orderNo}'`,
  );
  assert.deepEqual(rows, [{ agency_code: 'PPZ' }]);
  // The release before the migration, still running during a rolling upgrade, queues without the agency.
  await store.write(
    `INSERT INTO callbacks (order_no, status, url, fields, created_at) VALUES ('${orderNo}', 'success', 'https://m.example/cb', '{}', '${AT}')`,
  );
  const again = await store.sql<{ agency_code: string }>(
    `SELECT agency_code FROM callbacks WHERE order_no = '${orderNo}' ORDER BY id`,
  );
  assert.deepEqual(again, [{ agency_code: 'PPZ' }, { agency_code: 'PPZ' }]);
  const page = await store.dashboardReads.callbacksPage({ agency: 'PPZ' }, 10, 0);
  assert.equal(page.total, 2);
  assert.equal(page.byState.queued, 2);
});

onSqlite(
  "SQLite reads each part of the page through its own index, never sorting the agency's callbacks",
  async (_t, store) => {
    const params = { agency: "'LZS'", state: "'delivered'", limit: '50', offset: '0' };
    for (const [name, sql] of Object.entries(CALLBACK_PAGE_SQL)) {
      const text = sql.replace(/@(\w+)/g, (_m, key: keyof typeof params) => params[key]);
      const plan = (await store.sql<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`))
        .map((r) => r.detail)
        .join(' | ');
      const index =
        { failing: 'callbacks_failing', newest: 'callbacks_by_agency' }[name] ?? 'callbacks_by_state';
      assert.match(plan, new RegExp(`SEARCH c USING INDEX ${index} \\(`), `${name}: ${plan}`);
      assert.doesNotMatch(plan, /SCAN c\b(?! USING)|SCAN callbacks(?! USING)/, `${name}: ${plan}`);
      // The failing part and the newest are the agency's own index range, newest first: never sorted.
      if (name !== 'inState') assert.doesNotMatch(plan, /TEMP B-TREE/, `${name}: ${plan}`);
    }
  },
);
