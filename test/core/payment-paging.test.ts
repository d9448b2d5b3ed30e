import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { openStore, type PaymentRow } from '../../core/store/index.ts';
import { businessDate } from '../../core/time.ts';
import { tempDir } from '../helpers.ts';

// Instants on both sides of Kuala Lumpur midnights (16:00 UTC), with ties, so that day buckets, equal
// timestamps and the range bounds are all exercised.
const INSTANTS = [
  '2026-11-19T15:59:59.999Z',
  '2026-11-19T16:00:00.000Z',
  '2026-11-20T03:00:00.000Z',
  '2026-11-20T15:59:59.999Z',
  '2026-11-20T16:00:00.000Z',
  '2026-11-22T10:00:00.000Z',
];
const RANGES: [string, string][] = [
  ['0001-01-01', '9999-12-31'],
  ['2026-11-19', '2026-11-19'],
  ['2026-11-20', '2026-11-20'],
  ['2026-11-20', '2026-11-22'],
  ['2026-11-21', '2026-11-21'],
  ['2026-11-23', '2026-11-30'],
];
const STATUSES = ['pending', 'success', 'failed'] as const;

function payment(orderNo: string, agencyCode: string, createdAt: string, status: PaymentRow['status']) {
  return {
    orderNo,
    agencyCode,
    refNo: orderNo,
    extraData: null,
    paymentCategory: null,
    amountSen: 1000,
    addChargeSen: 0,
    email: 'payer@example.my',
    returnUrl: 'http://127.0.0.1/return',
    paymentMethod: null,
    status,
    debitAuthCode: null,
    fpxTxnId: null,
    fpxTxnTime: null,
    createdAt,
    updatedAt: createdAt,
    source: 'checkout',
    payLink: null,
  } satisfies PaymentRow;
}

test('payment pages, totals and streams of one agency or several equal a plain sorted filter, through status changes', async (t) => {
  const store = openStore(path.join(tempDir(t), 'amil.db'));
  // A second connection changes statuses behind the store's back: the counts follow by trigger.
  const raw = new Database(store.file);
  t.after(async () => {
    raw.close();
    await store.close();
  });
  const setStatus = raw.prepare('UPDATE payments SET status = ? WHERE order_no = ?');
  let run = 0;

  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          other: fc.boolean(),
          at: fc.constantFrom(...INSTANTS),
          status: fc.constantFrom(...STATUSES),
        }),
        { maxLength: 30 },
      ),
      fc.array(fc.record({ index: fc.nat(), status: fc.constantFrom(...STATUSES) }), { maxLength: 8 }),
      fc.array(
        fc.record({
          // One agency, or the combined report of a token covering both (given in either order).
          scope: fc.constantFrom('mine', 'both', 'both reversed'),
          range: fc.constantFrom(...RANGES),
          approved: fc.option(fc.boolean(), { nil: undefined }),
          limit: fc.integer({ min: 1, max: 7 }),
          page: fc.nat(8),
        }),
        { minLength: 1, maxLength: 6 },
      ),
      async (made, updates, queries) => {
        run += 1;
        const [mine, other] = [`A${run}`, `B${run}`];
        for (const code of [mine, other]) {
          await store.agencies.create({ code, name: code, apiKey: `key-${code}`, now: new Date() });
        }
        const model = made.map((m, i) =>
          payment(
            `${m.other ? other : mine}-${String(i).padStart(3, '0')}`,
            m.other ? other : mine,
            m.at,
            m.status,
          ),
        );
        for (const row of model) await store.orders.insert(row, 'test');
        for (const update of updates) {
          const row = model[update.index % Math.max(1, model.length)];
          if (!row) continue;
          row.status = update.status;
          setStatus.run(update.status, row.orderNo);
        }

        for (const q of queries) {
          const [firstDay, lastDay] = q.range;
          const agencies = q.scope === 'mine' ? [mine] : q.scope === 'both' ? [mine, other] : [other, mine];
          const expected = model
            .filter((row) => agencies.includes(row.agencyCode))
            .filter((row) => {
              const day = businessDate(new Date(row.createdAt));
              return day >= firstDay && day <= lastDay;
            })
            .filter((row) => q.approved === undefined || (row.status === 'success') === q.approved)
            .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.orderNo.localeCompare(b.orderNo))
            .map((row) => `${row.orderNo}:${row.status}`);
          const filter = {
            agency: agencies.length === 1 ? mine : agencies,
            firstDay,
            lastDay,
            ...(q.approved !== undefined && { isApproved: q.approved }),
          };
          const { rows, total } = await store.paymentReport.page(filter, q.limit, q.page * q.limit);
          assert.equal(total, expected.length, 'total');
          assert.deepEqual(
            rows.map((row) => `${row.orderNo}:${row.status}`),
            expected.slice(q.page * q.limit, (q.page + 1) * q.limit),
          );
          const streamed: string[] = [];
          for await (const row of store.paymentReport.all(filter))
            streamed.push(`${row.orderNo}:${row.status}`);
          assert.deepEqual(streamed, expected, 'every row streamed, in report order');
        }
      },
    ),
    { numRuns: 80 },
  );
  assert.equal(run, 80, 'every generated case ran');
});
