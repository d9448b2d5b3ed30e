import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bankRecord, startApp } from '../helpers.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import type { BankWebhookResponse } from '../../schemas/index.ts';

test('a batch of 250 records, some stored before and one sent twice, is judged in order and every version reaches its ledger once', async (t) => {
  const app = await startApp(t);
  const tag = `BIG${process.pid}`;
  const records = Array.from({ length: 250 }, (_, i) =>
    bankRecord({
      orderno: `${tag}-${i}`,
      agency: i % 2 === 0 ? 'BANKLZS' : 'BANKPPZ',
      amount: 10 + i,
      status: i === 7 ? 'pending' : 'success',
    }),
  );
  // Records 120 and 180 are stored first: in the large batch they are duplicates, between new ones.
  const before = await app.postBatch({ transactions: [records[120], records[180]] });
  assert.equal(before.status, 200);
  // Record 7 comes again at the end of the batch, settled: an update of the version the batch just stored.
  const settled = { ...(records[7] as (typeof records)[number]), status: 'success' as const };
  const response = await app.postBatch({ transactions: [...records, settled] });
  assert.equal(response.status, 200, await response.clone().text());
  const body = (await response.json()) as BankWebhookResponse;
  assert.deepEqual(body.summary, { records: 251, accepted: 248, duplicate: 2, updated: 1, conflict: 0 });
  assert.deepEqual(
    body.results.map((r) => r.index),
    Array.from({ length: 251 }, (_, i) => i),
    'one result per record, in the batch order',
  );
  assert.equal(body.results[120]?.outcome, 'duplicate');
  assert.equal(body.results[250]?.outcome, 'updated');

  const runtime = createInProcessRuntime(app.deps, { pollMs: 20, maxAttempts: 3, backoffMs: 0 });
  t.after(() => runtime.stop());
  await runtime.drain();
  const lzs = await app.deps.store.ledger.entries('LZS');
  const ppz = await app.deps.store.ledger.entries('PPZ');
  // 250 postings, plus the second version of record 7 (PPZ: odd index).
  assert.equal(lzs.length, 125);
  assert.equal(ppz.length, 126);
  const sen = (entries: typeof lzs) => entries.reduce((sum, e) => sum + e.amountSen, 0);
  const expected = (parity: number) =>
    records.reduce((sum, _, i) => sum + (i % 2 === parity ? (10 + i) * 100 : 0), 0);
  assert.equal(sen(lzs), expected(0));
  assert.equal(sen(ppz), expected(1) + 1700, 'record 7 counted in both its versions');
  const seven = ppz.filter((e) => e.amountSen === 1700).map((e) => [e.version, e.status]);
  assert.deepEqual(seven, [
    [1, 'pending'],
    [2, 'success'],
  ]);
});
