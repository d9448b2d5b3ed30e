import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bankRecord, fitrahRecord, startApp } from '../helpers.ts';
import type { BankWebhookResponse } from '../../schemas/index.ts';

async function post(app: Awaited<ReturnType<typeof startApp>>, transactions: unknown[]) {
  const response = await app.postBatch({ transactions });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as BankWebhookResponse;
}

const outcomes = (body: BankWebhookResponse) => body.results.map((r) => r.outcome);

test('the same batch posted twice: 200 twice, one stored copy, the second all duplicate', async (t) => {
  const app = await startApp(t);
  const batch = [bankRecord(), fitrahRecord(), bankRecord({ agency: 'BANK', amount: 1 })];
  const first = await post(app, batch);
  assert.deepEqual(outcomes(first), ['accepted', 'accepted', 'accepted']);
  assert.deepEqual(first.summary, { records: 3, accepted: 3, duplicate: 0, updated: 0, conflict: 0 });
  assert.equal(first.has_conflicts, false);

  const second = await post(app, batch);
  assert.deepEqual(outcomes(second), ['duplicate', 'duplicate', 'duplicate']);
  assert.deepEqual(
    second.results.map((r) => r.status),
    ['success', 'success', 'success'],
  );
  const counts = await app.deps.store.bankPostings.counts();
  assert.equal(counts.postings, 3);
  assert.equal(counts.versions, 3);
  assert.equal(counts.batches, 2, 'both requests are archived');
});

test('a record with its keys in another order is still a duplicate', async (t) => {
  const app = await startApp(t);
  const record = bankRecord();
  await post(app, [record]);
  const reordered = Object.fromEntries(Object.entries(record).reverse());
  assert.deepEqual(outcomes(await post(app, [reordered])), ['duplicate']);
});

test('a pending that becomes success is updated, with its history kept', async (t) => {
  const app = await startApp(t);
  const pending = bankRecord({ status: 'pending' });
  await post(app, [pending]);
  const success = { ...pending, status: 'success' as const, time: '2026-11-20T09:20:00+08:00' };
  const body = await post(app, [success]);
  assert.deepEqual(body.results[0], {
    index: 0,
    orderno: pending.orderno,
    outcome: 'updated',
    status: 'success',
  });

  const stored = await app.deps.store.bankPostings.get('demo-bank', pending.orderno);
  assert.equal(stored?.status, 'success');
  assert.deepEqual(
    stored?.versions.map((v) => v.status),
    ['pending', 'success'],
  );
  assert.equal(
    stored?.businessDate,
    '2026-11-20',
    'the posting keeps the business day it was first posted on',
  );
});

test('a pending that becomes failed is updated', async (t) => {
  const app = await startApp(t);
  const pending = bankRecord({ status: 'pending' });
  await post(app, [pending]);
  assert.deepEqual(outcomes(await post(app, [{ ...pending, status: 'failed' }])), ['updated']);
});

test('a stale retry (the pending version after the update) is a duplicate and changes nothing', async (t) => {
  const app = await startApp(t);
  const pending = bankRecord({ status: 'pending' });
  await post(app, [pending]);
  await post(app, [{ ...pending, status: 'success' }]);
  const retry = await post(app, [pending]);
  assert.deepEqual(retry.results[0], {
    index: 0,
    orderno: pending.orderno,
    outcome: 'duplicate',
    status: 'success',
  });
  assert.equal((await app.deps.store.bankPostings.get('demo-bank', pending.orderno))?.status, 'success');
});

test('success then failed is a conflict kept as an anomaly, and the rest of that batch is stored', async (t) => {
  const app = await startApp(t);
  const paid = bankRecord();
  await post(app, [paid]);
  const others = [bankRecord(), bankRecord()];
  const body = await post(app, [others[0], { ...paid, status: 'failed' }, others[1]]);
  assert.deepEqual(outcomes(body), ['accepted', 'conflict', 'accepted']);
  assert.equal(body.has_conflicts, true);
  assert.equal(body.summary.conflict, 1);
  const conflict = body.results[1];
  assert.equal(conflict?.status, 'success', 'the stored status stands');
  assert.match(conflict?.anomaly_id ?? '', /^anm_/);

  const [anomaly, ...more] = await app.deps.store.anomalies.list({ status: 'open' });
  assert.equal(more.length, 0);
  assert.equal(anomaly?.id, conflict?.anomaly_id);
  assert.equal(anomaly?.orderno, paid.orderno);
  assert.equal((JSON.parse(anomaly?.storedRecord ?? '{}') as { status: string }).status, 'success');
  assert.equal((JSON.parse(anomaly?.incomingRecord ?? '{}') as { status: string }).status, 'failed');
  assert.match(anomaly?.reason ?? '', /final/);
  assert.equal((await app.deps.store.bankPostings.get('demo-bank', paid.orderno))?.status, 'success');
  assert.equal((await app.deps.store.bankPostings.counts()).postings, 3);
});

test('the same conflict sent again is counted on the one anomaly, not duplicated', async (t) => {
  const app = await startApp(t);
  const paid = bankRecord();
  await post(app, [paid]);
  const first = await post(app, [{ ...paid, status: 'failed' }]);
  const again = await post(app, [{ ...paid, status: 'failed' }]);
  assert.equal(again.results[0]?.outcome, 'conflict');
  assert.equal(again.results[0]?.anomaly_id, first.results[0]?.anomaly_id);
  const anomalies = await app.deps.store.anomalies.list();
  assert.equal(anomalies.length, 1);
  assert.equal(anomalies[0]?.seenCount, 2);

  // Resolved, then sent once more: it opens again, so ops see that it recurs.
  assert.ok(await app.deps.store.anomalies.resolve(anomalies[0]?.id ?? '', 'bank says ignore', new Date()));
  await post(app, [{ ...paid, status: 'failed' }]);
  const [reopened] = await app.deps.store.anomalies.list({ status: 'open' });
  assert.equal(reopened?.seenCount, 3);
  assert.equal(reopened?.resolutionNote, 'bank says ignore', 'the earlier resolution is kept for the record');
});

test('a pending resent with other changes, or a settled record with changed details, is a conflict', async (t) => {
  const app = await startApp(t);
  const pending = bankRecord({ status: 'pending' });
  const paid = bankRecord();
  await post(app, [pending, paid]);
  const body = await post(app, [
    { ...pending, amount: 999 }, // pending -> pending with a new amount
    { ...pending, status: 'success', amount: 999 }, // a transition that also changes the amount
    { ...paid, name: 'Someone Else' }, // a final record with a new name
  ]);
  assert.deepEqual(outcomes(body), ['conflict', 'conflict', 'conflict']);
  assert.equal((await app.deps.store.bankPostings.get('demo-bank', pending.orderno))?.status, 'pending');
});

test('records of one batch apply in order: the same orderno twice is judged against the first', async (t) => {
  const app = await startApp(t);
  const pending = bankRecord({ status: 'pending' });
  const body = await post(app, [
    pending,
    pending,
    { ...pending, status: 'success' },
    { ...pending, status: 'failed' },
  ]);
  assert.deepEqual(outcomes(body), ['accepted', 'duplicate', 'updated', 'conflict']);
  assert.deepEqual(
    body.results.map((r) => r.index),
    [0, 1, 2, 3],
  );
});

test('20 concurrent requests with overlapping ordernos store each orderno once, and each response is truthful', async (t) => {
  const app = await startApp(t);
  const pool = Array.from({ length: 30 }, () => bankRecord());
  const batches = Array.from({ length: 20 }, (_, i) =>
    Array.from({ length: 10 }, (_, j) => pool[(i * 3 + j) % pool.length]),
  );
  const bodies = await Promise.all(batches.map((batch) => post(app, batch)));

  const acceptedBy = new Map<string, number>();
  for (const body of bodies) {
    for (const result of body.results) {
      assert.ok(['accepted', 'duplicate'].includes(result.outcome));
      if (result.outcome === 'accepted')
        acceptedBy.set(result.orderno, (acceptedBy.get(result.orderno) ?? 0) + 1);
    }
  }
  const used = new Set(batches.flat().map((r) => r?.orderno));
  assert.equal(acceptedBy.size, used.size, 'every orderno was accepted by some response');
  assert.ok(
    [...acceptedBy.values()].every((n) => n === 1),
    'and by exactly one',
  );
  assert.equal((await app.deps.store.bankPostings.counts()).postings, used.size);
});

test('amounts are stored as integer sen and time as UTC plus its Kuala Lumpur business date', async (t) => {
  const app = await startApp(t);
  const cases = [
    bankRecord({ amount: 0.07, time: '2026-11-20T23:59:59+08:00' }),
    bankRecord({ amount: 1234.5, time: '2026-11-20T16:00:00Z' }),
    bankRecord({ amount: 2500, time: '2026-11-19T23:30:00-05:00' }),
  ];
  await post(app, cases);
  const stored = await Promise.all(cases.map((c) => app.deps.store.bankPostings.get('demo-bank', c.orderno)));
  assert.deepEqual(
    stored.map((s) => [s?.amountSen, s?.timeUtc, s?.businessDate]),
    [
      [7, '2026-11-20T15:59:59.000Z', '2026-11-20'],
      [123450, '2026-11-20T16:00:00.000Z', '2026-11-21'],
      [250000, '2026-11-20T04:30:00.000Z', '2026-11-20'],
    ],
  );
});

test('routing is configuration: BANKLZS and BANKPPZ reach their agencies, BANK is a live test', async (t) => {
  const app = await startApp(t, { BANK_AGENCY_ROUTES: 'BANKLZS=LZS,BANKPPZ=PPZ,BANK=test,BANKMAIS=MAIS' });
  const records = [
    bankRecord({ agency: 'BANKLZS' }),
    bankRecord({ agency: 'BANKPPZ' }),
    bankRecord({ agency: 'BANK' }),
    bankRecord({ agency: 'BANKMAIS' as never }),
  ];
  await post(app, records);
  const stored = await Promise.all(
    records.map((r) => app.deps.store.bankPostings.get('demo-bank', r.orderno)),
  );
  assert.deepEqual(
    stored.map((s) => [s?.route, s?.agencyCode]),
    [
      ['agency', 'LZS'],
      ['agency', 'PPZ'],
      ['test', null],
      ['agency', 'MAIS'],
    ],
  );
});
