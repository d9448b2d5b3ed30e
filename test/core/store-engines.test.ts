/**
 * The repositories of partners, agencies, anomalies, bank postings, the outbox and the ledger: the same
 * assertions on SQLite and on PostgreSQL (test/support/engines.ts).
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { prepareRecord } from '../../ingest/bank-webhook/prepare.ts';
import type { PreparedRecord } from '../../core/store/bank-postings.ts';
import { TEST_SINK } from '../../core/store/ledger.ts';
import { bankRecord } from '../helpers.ts';
import { batchInput, normalisedRows } from '../support/batches.ts';
import { forEachEngine, type EngineStore } from '../support/engines.ts';

const ROUTES = {
  BANKLZS: { kind: 'agency', agency: 'LZS' },
  BANK: { kind: 'test' },
} as const;
const NOW = new Date('2026-11-20T02:00:00.000Z');

function prepared(overrides: Parameters<typeof bankRecord>[0] = {}): PreparedRecord {
  return prepareRecord(bankRecord(overrides), ROUTES);
}

async function withPartner(t: TestContext, open: () => Promise<EngineStore>): Promise<EngineStore> {
  void t;
  const store = await open();
  await store.partners.addPassword({ partnerId: 'demo-bank', label: 'main', hash: 'h1', now: NOW });
  return store;
}

forEachEngine('a partner gets passwords, keeps older ones until revoked, and lists them', async (t, open) => {
  const store = await open();
  void t;
  const first = await store.partners.addPassword({ partnerId: 'bank-a', label: 'one', hash: 'h1', now: NOW });
  await store.partners.addPassword({ partnerId: 'bank-a', label: 'two', hash: 'h2', now: NOW });
  assert.deepEqual((await store.partners.activePasswords()).map((p) => p.label).sort(), ['one', 'two']);
  assert.equal(await store.partners.isPasswordActive(first), true);
  assert.equal(
    await store.partners.revokePasswords({ partnerId: 'bank-a', exceptLabel: 'two', now: NOW }),
    1,
  );
  assert.equal(await store.partners.isPasswordActive(first), false);
  assert.deepEqual(await store.partners.list(), [
    {
      id: 'bank-a',
      createdAt: NOW.toISOString(),
      passwords: [
        { id: first, label: 'one', createdAt: NOW.toISOString(), revokedAt: NOW.toISOString() },
        {
          id: (await store.partners.activePasswords())[0]?.id,
          label: 'two',
          createdAt: NOW.toISOString(),
          revokedAt: null,
        },
      ],
    },
  ]);
  await assert.rejects(
    store.partners.addPassword({ partnerId: 'bank-a', label: 'two', hash: 'h3', now: NOW }),
    /UNIQUE|duplicate key/,
  );
});

forEachEngine('an agency is created once, read without its key, rotated and updated', async (t, open) => {
  void t;
  const store = await open();
  assert.equal(
    await store.agencies.create({
      code: 'LZS',
      name: 'Lembaga',
      apiKey: 'k1',
      now: NOW,
      settings: { callbackHosts: ['a.my'] },
    }),
    true,
  );
  assert.equal(await store.agencies.create({ code: 'LZS', name: 'Other', apiKey: 'k2', now: NOW }), false);
  const row = await store.agencies.get('LZS');
  assert.equal(row?.name, 'Lembaga');
  assert.equal(row?.createdAt, NOW.toISOString());
  assert.equal(row?.hasApiKey, true);
  assert.deepEqual(row?.settings.callbackHosts, ['a.my']);
  assert.equal(await store.agencies.apiKeyOf('LZS'), 'k1');
  const later = new Date(NOW.getTime() + 1000);
  assert.equal(await store.agencies.rotateKey('LZS', 'k3', later), true);
  assert.equal(await store.agencies.apiKeyOf('LZS'), 'k3');
  assert.equal((await store.agencies.get('LZS'))?.apiKeyRotatedAt, later.toISOString());
  await Promise.all([
    store.agencies.update('LZS', { settings: { reportRecipients: ['ops@lzs.my'] } }),
    store.agencies.update('LZS', { name: 'Lembaga Zakat Selangor' }),
  ]);
  const updated = await store.agencies.get('LZS');
  assert.equal(updated?.name, 'Lembaga Zakat Selangor');
  assert.deepEqual(updated?.settings.reportRecipients, ['ops@lzs.my']);
  assert.equal(await store.agencies.update('NOPE', { name: 'x' }), false);
  assert.equal(await store.agencies.apiKeyOf('NOPE'), undefined);
  assert.deepEqual(
    (await store.agencies.list()).map((a) => a.code),
    ['LZS'],
  );
});

forEachEngine(
  "a batch's postings are numbered in the bank's order, whatever their ordernos",
  async (t, open) => {
    const store = await withPartner(t, open);
    const ordernos = ['MBB-300', 'MBB-100', 'mbb-050', 'MBB-200', 'MBB_150'];
    const result = await store.bankPostings.ingestBatch(
      batchInput(ordernos.map((orderno) => prepared({ orderno }))),
    );
    assert.equal(result.summary.accepted, 5);
    // The zakat report and the dashboard's postings list a day in posting order (decision 204).
    const rows = await store.sql<{ orderno: string }>('SELECT orderno FROM bank_postings ORDER BY id');
    assert.deepEqual(
      rows.map((r) => r.orderno),
      ordernos,
    );
  },
);

forEachEngine(
  'a batch is accepted, then judged duplicate, updated and conflicting on resend',
  async (t, open) => {
    const store = await withPartner(t, open);
    const pending = prepared({ status: 'pending' });
    const settled = prepared({ status: 'success' });
    const first = await store.bankPostings.ingestBatch(batchInput([pending, settled]));
    assert.deepEqual(first.summary, { records: 2, accepted: 2, duplicate: 0, updated: 0, conflict: 0 });
    assert.equal(first.received_at, NOW.toISOString());

    const success = prepareRecord({ ...bankRecord({ orderno: pending.orderno, status: 'success' }) }, ROUTES);
    const changed = prepareRecord({ ...bankRecord({ orderno: settled.orderno, amount: 99 }) }, ROUTES);
    const later = new Date(NOW.getTime() + 60_000);
    const second = await store.bankPostings.ingestBatch(batchInput([settled, success, changed], later));
    assert.deepEqual(
      second.results.map((r) => r.outcome),
      ['duplicate', 'updated', 'conflict'],
    );
    assert.equal(second.has_conflicts, true);
    const stored = await store.bankPostings.get('demo-bank', pending.orderno);
    assert.equal(stored?.status, 'success');
    assert.equal(stored?.amountSen, 15050);
    assert.equal(stored?.timeUtc, '2026-11-20T01:15:23.000Z');
    assert.deepEqual(
      stored?.versions.map((v) => [v.version, v.status, v.receivedAt]),
      [
        [1, 'pending', NOW.toISOString()],
        [2, 'success', later.toISOString()],
      ],
    );
    // The version resent after it was superseded is still a duplicate.
    const third = await store.bankPostings.ingestBatch(batchInput([pending, changed], later));
    assert.deepEqual(
      third.results.map((r) => r.outcome),
      ['duplicate', 'conflict'],
    );
    const anomalies = await store.anomalies.list({ status: 'open' });
    assert.equal(anomalies.length, 1);
    assert.equal(anomalies[0]?.seenCount, 2);
    assert.equal(anomalies[0]?.lastSeenAt, later.toISOString());
    assert.equal(await store.anomalies.resolve(anomalies[0]?.id ?? '', 'called the bank', later), true);
    assert.equal(await store.anomalies.resolve(anomalies[0]?.id ?? '', 'again', later), false);
    assert.deepEqual(await store.anomalies.list({ status: 'open' }), []);
    assert.deepEqual(await store.bankPostings.counts(), {
      postings: 2,
      versions: 3,
      batches: 3,
      anomalies: 1,
    });
  },
);

forEachEngine(
  'a batch that fails stores nothing of itself, and the batches beside it are kept',
  async (t, open) => {
    const store = await withPartner(t, open);
    const good = prepared();
    const bad = { ...prepared(), amountSen: -1 };
    const results = await Promise.allSettled([
      store.bankPostings.ingestBatch(batchInput([good])),
      store.bankPostings.ingestBatch(batchInput([prepared(), bad])),
    ]);
    assert.equal(results[0].status, 'fulfilled');
    assert.equal(results[1].status, 'rejected');
    assert.deepEqual(await store.bankPostings.counts(), {
      postings: 1,
      versions: 1,
      batches: 1,
      anomalies: 0,
    });
    assert.equal((await store.outbox.pending(10, NOW)).length, 1);
  },
);

forEachEngine('concurrent batches carrying the same new records store each posting once', async (t, open) => {
  const store = await withPartner(t, open);
  const records = Array.from({ length: 40 }, () => prepared());
  const shuffled = [...records].reverse();
  const responses = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      store.bankPostings.ingestBatch(batchInput(i % 2 === 0 ? records : shuffled)),
    ),
  );
  const accepted = responses.reduce((n, r) => n + r.summary.accepted, 0);
  const duplicate = responses.reduce((n, r) => n + r.summary.duplicate, 0);
  assert.equal(accepted, 40);
  assert.equal(duplicate, 5 * 40);
  assert.deepEqual(await store.bankPostings.counts(), {
    postings: 40,
    versions: 40,
    batches: 6,
    anomalies: 0,
  });
});

forEachEngine(
  'the outbox hands out rows per queue, and records sends, failures and completions',
  async (t, open) => {
    void t;
    const store = await open();
    for (let i = 1; i <= 3; i += 1) await store.outbox.enqueue('normalise', `n.${i}`, { i }, NOW);
    await store.outbox.enqueue('ledger', 'l.1', { i: 1 }, NOW);
    await store.outbox.enqueue('ledger', 'l.1', { i: 'again' }, NOW);
    const rows = await store.outbox.pending(2, NOW);
    assert.deepEqual(
      rows.map((r) => [r.queue, r.jobId, JSON.parse(r.payload) as unknown]),
      [
        ['normalise', 'n.1', { i: 1 }],
        ['normalise', 'n.2', { i: 2 }],
        ['ledger', 'l.1', { i: 1 }],
      ],
    );
    const [n1, n2, l1] = rows;
    await store.outbox.markSentMany([n1?.id ?? 0, n2?.id ?? 0], NOW);
    await store.outbox.markDone('n.1', NOW);
    const retryAt = new Date(NOW.getTime() + 5000);
    await store.outbox.markAttemptFailed(l1?.id ?? 0, 'redis down', NOW, retryAt, false);
    assert.deepEqual(
      (await store.outbox.pending(10, NOW)).map((r) => r.jobId),
      ['n.3'],
    );
    assert.deepEqual(
      (await store.outbox.pending(10, retryAt)).map((r) => [r.jobId, r.attempts]),
      [
        ['n.3', 0],
        ['l.1', 1],
      ],
    );
    assert.deepEqual(
      (await store.outbox.unfinished(NOW, 10)).map((r) => r.jobId),
      ['n.2'],
    );
    await store.outbox.markFailedForGood('n.2', 'bad payload', NOW);
    assert.deepEqual(
      (await store.outbox.failed()).map((r) => [r.jobId, r.lastError, r.failedAt]),
      [['n.2', 'bad payload', NOW.toISOString()]],
    );
    assert.deepEqual(await store.outbox.stats(), [
      { queue: 'ledger', waiting: 1, failed: 0, sent: 0, unfinished: 0 },
      { queue: 'normalise', waiting: 1, failed: 1, sent: 2, unfinished: 0 },
    ]);
    assert.equal(await store.outbox.retryFailed('normalise'), 1);
    assert.equal(await store.outbox.redriveDue(NOW), 0);
  },
);

forEachEngine(
  'a stored batch is normalised and ledgered once, however often its jobs run',
  async (t, open) => {
    const store = await withPartner(t, open);
    const lzs = prepared();
    const test = prepared({ agency: 'BANK' });
    const response = await store.bankPostings.ingestBatch(batchInput([lzs, test]));
    const versions = await store.ledger.batchVersions(response.batch_id);
    assert.deepEqual(
      versions.map((v) => [v.version, v.sink, v.businessDate, v.receivedDate]),
      [
        [1, 'LZS', '2026-11-20', '2026-11-20'],
        [1, TEST_SINK, '2026-11-20', '2026-11-20'],
      ],
    );
    const rows = normalisedRows(versions, response.batch_id);
    const jobs = [{ queue: 'ledger', jobId: `ledger.${response.batch_id}.LZS`, payload: { sink: 'LZS' } }];
    await store.ledger.saveNormalised(rows, jobs, NOW);
    await store.ledger.saveNormalised(rows, jobs, NOW);
    await store.ledger.appendFromBatch(response.batch_id, 'LZS', NOW);
    await store.ledger.appendFromBatch(response.batch_id, 'LZS', NOW);
    assert.deepEqual(await store.ledger.entries('LZS'), [
      {
        sink: 'LZS',
        postingId: versions[0]?.postingId,
        version: 1,
        businessDate: '2026-11-20',
        receivedDate: '2026-11-20',
        isAdjustment: false,
        status: 'success',
        amountSen: 15050,
        exceptions: ['EMAIL_MISMATCH'],
      },
    ]);
    assert.deepEqual(await store.ledger.entries('LZS', '2026-11-19'), []);
    assert.deepEqual(await store.ledger.entries(TEST_SINK), []);
    const normalised = await store.sql<{ n: number }>('SELECT count(*) AS n FROM normalised_postings');
    assert.equal(Number(normalised[0]?.n), 2);
    assert.deepEqual((await store.outbox.pending(10, NOW)).map((r) => r.jobId).sort(), [
      `ledger.${response.batch_id}.LZS`,
      `normalise.${response.batch_id}`,
    ]);
  },
);

forEachEngine(
  'a posting and its batch, once the pipeline has rows of them, can be neither deleted nor re-keyed',
  async (t, open) => {
    // PostgreSQL's pipeline tables hold no foreign keys (decision 217): the store refuses these instead.
    const store = await withPartner(t, open);
    const response = await store.bankPostings.ingestBatch(batchInput([prepared()]));
    const versions = await store.ledger.batchVersions(response.batch_id);
    await store.ledger.saveNormalised(normalisedRows(versions, response.batch_id), [], NOW);
    await store.ledger.appendFromBatch(response.batch_id, 'LZS', NOW);
    const id = versions[0]!.postingId;
    for (const sql of [
      `DELETE FROM bank_postings WHERE id = ${id}`,
      `UPDATE bank_postings SET id = ${id + 1000} WHERE id = ${id}`,
      `DELETE FROM webhook_batches WHERE id = '${response.batch_id}'`,
      `UPDATE webhook_batches SET id = 'other' WHERE id = '${response.batch_id}'`,
      ...(store.engine === 'postgresql'
        ? ['TRUNCATE bank_postings CASCADE', 'TRUNCATE webhook_batches CASCADE']
        : []),
    ]) {
      await assert.rejects(store.write(sql), /foreign key|never deleted or re-keyed/i, sql);
    }
    const [left] = await store.sql<{ n: number }>(
      `SELECT (SELECT count(*) FROM bank_postings) + (SELECT count(*) FROM normalised_postings)
         + (SELECT count(*) FROM ledger_entries) AS n`,
    );
    assert.equal(
      Number(left!.n),
      3,
      'the posting, its normalised version and its ledger entry are all there',
    );
  },
);

forEachEngine(
  'relays handing over at once never hand over the same row, and a failed hand-over marks nothing',
  async (t, open) => {
    void t;
    const store = await open();
    await Promise.all(
      Array.from({ length: 300 }, (_, i) => store.outbox.enqueue(`q${i % 3}`, `job.${i}`, { i }, NOW)),
    );
    await assert.rejects(
      store.outbox.handOver(50, NOW, () => Promise.reject(new Error('redis down'))),
      /redis down/,
    );
    assert.equal((await store.outbox.pending(1000, NOW)).length, 300);
    const handed: string[] = [];
    // Each relay takes its time handing over (a Redis round trip), so their looks overlap.
    const relay = async () => {
      for (;;) {
        const n = await store.outbox.handOver(20, NOW, async (rows) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          handed.push(...rows.map((r) => r.jobId));
        });
        if (n === 0) return;
      }
    };
    await Promise.all([relay(), relay(), relay(), relay()]);
    assert.equal(handed.length, 300, 'every row handed over');
    assert.equal(new Set(handed).size, 300, 'no row handed over twice');
    assert.deepEqual(await store.outbox.pending(1000, NOW), []);
  },
);

forEachEngine(
  'a batch that carries one orderno twice judges the second record against the first, and each stored version is its batch’s',
  async (t, open) => {
    const store = await withPartner(t, open);
    const pending = prepared({ status: 'pending' });
    const success = prepareRecord(bankRecord({ orderno: pending.orderno, status: 'success' }), ROUTES);
    const resent = await store.bankPostings.ingestBatch(batchInput([pending, pending]));
    assert.deepEqual(
      resent.results.map((r) => r.outcome),
      ['accepted', 'duplicate'],
    );
    const other = prepared({ status: 'pending' });
    const changed = await store.bankPostings.ingestBatch(batchInput([other, success, other, success]));
    assert.deepEqual(
      changed.results.map((r) => r.outcome),
      ['accepted', 'updated', 'duplicate', 'duplicate'],
    );
    // What normalising each batch reads: every accepted or updated record's version, once.
    const versions = async (batchId: string) =>
      (await store.ledger.batchVersions(batchId)).map((v) => v.version).sort();
    assert.deepEqual(await versions(resent.batch_id), [1]);
    assert.deepEqual(await versions(changed.batch_id), [1, 2]);
  },
);
