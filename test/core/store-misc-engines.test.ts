/**
 * Reconciliation runs, QR codes, report tokens, the sandbox acquirer's books and the readiness write: the
 * same behaviour on SQLite and on PostgreSQL (test/support/pg-stores.ts).
 */
import assert from 'node:assert/strict';
import type { NewReconRun } from '../../core/store/index.ts';
import { seedDemoData } from '../../core/bootstrap.ts';
import { onBothEngines } from '../support/engines.ts';

function run(overrides: Partial<NewReconRun> = {}): NewReconRun {
  return {
    sink: 'LZS',
    businessDate: '2026-11-20',
    trigger: 'nightly',
    asOf: '2026-11-20T16:30:00.000Z',
    startedAt: '2026-11-20T16:30:01.000Z',
    finishedAt: '2026-11-20T16:30:05.000Z',
    fingerprint: 'f1',
    file: 'LZS-2026-11-20.xlsx',
    fileSha256: 'a'.repeat(64),
    fileBytes: 12345,
    inputCounts: { postings: 3, payments: 2 },
    totals: { successSen: 1000 },
    changes: null,
    email: true,
    ...overrides,
  };
}

onBothEngines(
  'runs of a day are recorded in turn, each naming the one before, with their e-mail jobs',
  async (_t, store) => {
    const first = await store.reconRuns.record(run());
    assert.equal(first.previousRun, null);
    assert.deepEqual(first.inputCounts, { postings: 3, payments: 2 });
    assert.deepEqual(first.totals, { successSen: 1000 });
    assert.equal(first.fileBytes, 12345);
    assert.equal(first.asOf, '2026-11-20T16:30:00.000Z');
    const racing = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        store.reconRuns.record(run({ trigger: 'manual', fingerprint: `m${i}`, email: false })),
      ),
    );
    // However they raced, the runs form one chain: each names the one recorded just before it.
    const chain = [first, ...racing].sort((a, b) => a.id - b.id);
    chain.slice(1).forEach((r, i) => assert.equal(r.previousRun, chain[i]!.id));
    assert.deepEqual(await store.reconRuns.get(first.id), first);
    assert.equal((await store.reconRuns.latest('LZS', '2026-11-20'))?.id, chain.at(-1)!.id);
    assert.equal(await store.reconRuns.latest('LZS', '2026-11-21'), undefined);
    assert.equal(await store.reconRuns.hasNightly('LZS', '2026-11-20'), true);
    assert.equal(await store.reconRuns.hasNightly('MAIWP', '2026-11-20'), false);
    assert.equal(await store.reconRuns.emailQueued(first.id), true);
    assert.equal(await store.reconRuns.emailQueued(racing[0]!.id), false);
    await store.reconRuns.record(run({ businessDate: '2026-11-19', sink: 'MAIWP' }));
    assert.deepEqual(
      (await store.reconRuns.list({ sink: 'LZS', limit: 3 })).map((r) => r.id),
      chain
        .slice(-3)
        .map((r) => r.id)
        .reverse(),
    );
    assert.deepEqual(
      (await store.reconRuns.list({ firstDay: '2026-11-19', lastDay: '2026-11-19', limit: 10 })).map(
        (r) => r.sink,
      ),
      ['MAIWP'],
    );

    await store.reconRuns.recordDelivery({
      runId: first.id,
      recipients: ['ops@lzs.example'],
      attempt: 1,
      at: '2026-11-20T16:31:00.000Z',
      outcome: 'failed',
      messageId: null,
      detail: 'smtp down',
    });
    assert.deepEqual(await store.reconRuns.deliveries(first.id), [
      {
        runId: first.id,
        recipients: ['ops@lzs.example'],
        attempt: 1,
        at: '2026-11-20T16:31:00.000Z',
        outcome: 'failed',
        messageId: null,
        detail: 'smtp down',
      },
    ]);
    assert.deepEqual(await store.ops.reconHealth(new Date('2026-11-20T00:00:00Z')), [
      { sink: 'LZS', lastNightlyAt: '2026-11-20T16:30:05.000Z', emailsFailed: 1 },
      { sink: 'MAIWP', lastNightlyAt: '2026-11-20T16:30:05.000Z', emailsFailed: 0 },
    ]);
  },
);

onBothEngines('a QR code, a report token and a sandbox payment read back as written', async (_t, store) => {
  await store.addAgency('LZS');
  const qr = {
    token: 'qr-1',
    agencyCode: 'LZS',
    kind: 'duitnow' as const,
    content: '000201...',
    createdAt: '2026-11-20T02:00:00.000Z',
    expiresAt: '2026-11-21T02:00:00.000Z',
  };
  await store.qrCodes.create(qr);
  assert.deepEqual(await store.qrCodes.get('qr-1'), qr);
  assert.equal(await store.qrCodes.get('qr-2'), undefined);

  await store.reportTokens.record({
    jti: 'j1',
    agencies: ['LZS', 'MAIWP'],
    label: 'finance',
    issuedAt: '2026-11-20T02:00:00.000Z',
    expiresAt: '2026-12-20T02:00:00.000Z',
  });
  assert.deepEqual((await store.reportTokens.get('j1'))?.agencies, ['LZS', 'MAIWP']);
  assert.equal(await store.reportTokens.revoke('j1', new Date('2026-11-21T00:00:00Z')), true);
  assert.equal(await store.reportTokens.revoke('j1', new Date('2026-11-22T00:00:00Z')), false);
  assert.equal((await store.reportTokens.get('j1'))?.revokedAt, '2026-11-21T00:00:00.000Z');

  const sandbox = {
    ref: 'SB1',
    orderNo: 'O1',
    method: 'fpx',
    bankId: 'TEST0021',
    amountSen: 1000,
    outcome: null,
    txnId: 'T1',
    createdAt: '2026-11-20T02:00:00.000Z',
    decidedAt: null,
    returnPath: '/return?t=1',
  };
  await store.sandbox.create(sandbox);
  assert.deepEqual(await store.sandbox.get('SB1'), sandbox);
  assert.equal(await store.sandbox.decide('SB1', '09', ['09'], '2026-11-20T02:01:00.000Z'), true);
  assert.equal(await store.sandbox.decide('SB1', '00', ['09'], '2026-11-20T02:02:00.000Z'), true);
  assert.equal(await store.sandbox.decide('SB1', '51', ['09'], '2026-11-20T02:03:00.000Z'), false);
  assert.equal((await store.sandbox.get('SB1'))?.outcome, '00');
});

onBothEngines('the readiness write commits, and the counts of an empty store are zero', async (_t, store) => {
  await store.ops.heartbeat(new Date('2026-11-20T02:00:00Z'));
  await store.ops.heartbeat(new Date('2026-11-20T02:00:01Z'));
  const [beat] = await store.sql<{ beat: number }>('SELECT beat FROM health_heartbeat WHERE id = 1');
  assert.equal(Number(beat!.beat), 2);
  // The callbacks' line is always there (their own rows are their queue, decision 264): zero.
  assert.deepEqual(await store.ops.outboxBacklog(), [
    { queue: 'callbacks', waiting: 0, failed: 0, oldestWaitingAt: null },
  ]);
  assert.deepEqual(await store.ops.callbackCounts(), []);
  assert.deepEqual(await store.ops.unledgeredVersions(new Date('2026-11-01T00:00:00Z')), {
    count: 0,
    oldestReceivedAt: null,
  });
});

onBothEngines(
  'web processes seeding the demo data at the same moment all start, and seed each thing once',
  async (_t, store) => {
    // Two or three web processes of a development cluster started together on one empty database.
    const seeding = await Promise.allSettled([1, 2, 3].map(() => seedDemoData(store, new Date())));
    assert.deepEqual(
      seeding.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : [])),
      [],
      'no process fails to start',
    );
    const partners = await store.partners.list();
    assert.deepEqual(
      partners.map((p) => [p.id, p.passwords.map((pw) => pw.label)]),
      [['demo-bank', ['demo']]],
    );
    const users = await store.dashboardUsers.list();
    assert.equal(users.length, new Set(users.map((u) => u.email)).size);
    assert.ok(users.length > 0);
  },
);

onBothEngines('a store is marked production once: the first mark stands', async (_t, store) => {
  assert.equal(await store.ops.productionMark(), undefined);
  const first = new Date('2026-11-29T01:00:00.000Z');
  assert.equal(await store.ops.markProduction(first), first.toISOString());
  assert.equal(await store.ops.markProduction(new Date('2026-11-30T01:00:00.000Z')), first.toISOString());
  assert.equal(await store.ops.productionMark(), first.toISOString());
});
