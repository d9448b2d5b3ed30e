import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { bankRecord, problemOf, startApp, type TestApp } from '../helpers.ts';
import type { BankWebhookResponse } from '../../schemas/index.ts';
import type { TestContext } from 'node:test';
import { appDb } from '../support/app-db.ts';
import { businessDate } from '../../core/time.ts';

/**
 * Through a connection of its own to the app's store (as another process would have), makes any insert of
 * a posting with orderno BOOM fail inside the ingest transaction. Returns what removes the fault.
 */
function failInsertsOfBoom(t: TestContext, app: TestApp): Promise<() => Promise<void>> {
  return appDb(t, app).failInserts('bank_postings', 'orderno', 'BOOM', 'forced failure');
}

test('a failure forced inside the transaction stores nothing of the batch, not even its archive', async (t) => {
  const app = await startApp(t);
  const repair = await failInsertsOfBoom(t, app);

  const response = await app.postBatch({
    transactions: [bankRecord(), bankRecord(), bankRecord({ orderno: 'BOOM' }), bankRecord()],
  });
  assert.equal(response.status, 500);
  const problem = await problemOf(response);
  assert.equal(problem.type, 'https://docs.amil.my/problems/internal');
  assert.doesNotMatch(JSON.stringify(problem), /forced failure|SQLITE|bank_postings/, 'no internals leak');
  assert.deepEqual(await app.deps.store.bankPostings.counts(), {
    postings: 0,
    versions: 0,
    batches: 0,
    anomalies: 0,
  });
  assert.match(app.logs(), /forced failure/, 'the cause is logged for ops');

  await repair();
  const retry = await app.postBatch({ transactions: [bankRecord()] });
  assert.equal(retry.status, 200, 'the store is usable after the rollback');
});

test('every body answered 2xx is archived verbatim with its SHA-256, time received and outcome', async (t) => {
  const app = await startApp(t);
  // Odd spacing and key order: the archive must keep the bytes, not a re-serialisation.
  const text = `{ "transactions" : [ ${JSON.stringify(bankRecord(), null, 3)} ] }\n`;
  const response = await app.postBatch(text);
  assert.equal(response.status, 200);
  const body = (await response.json()) as BankWebhookResponse;
  const refused = await app.postBatch('{"transactions": []}');
  assert.equal(refused.status, 422);

  const rows = await appDb(t, app).rows<{
    id: string;
    body: Buffer;
    sha256: string;
    received_at: string;
    business_date: string;
    response: string;
    accepted: number;
    body_encoding: string | null;
  }>('SELECT * FROM webhook_batches');
  assert.equal(rows.length, 1, 'the refused body is not archived');
  const [row] = rows;
  assert.equal(row?.id, body.batch_id);
  assert.equal(row?.body_encoding, null, 'a small body is kept as it came');
  assert.equal(row?.body.toString('utf8'), text);
  assert.equal(row?.sha256, createHash('sha256').update(text).digest('hex'));
  assert.equal(row?.received_at, body.received_at);
  assert.equal(row?.accepted, 1);
  assert.deepEqual(JSON.parse(row?.response ?? '{}'), body);
});

test('a body of 64 KiB or more is archived gzip-compressed; its SHA-256 and the replay export are of the bytes received', async (t) => {
  const app = await startApp(t);
  const records = Array.from({ length: 200 }, (_, i) => bankRecord({ orderno: `BIG${process.pid}-${i}` }));
  const text = `{ "transactions" : ${JSON.stringify(records, null, 3)} }\n`;
  assert.ok(text.length >= 64 * 1024, `the body has ${text.length} bytes`);
  const response = await app.postBatch(text);
  assert.equal(response.status, 200, await response.clone().text());
  const answer = (await response.json()) as BankWebhookResponse;
  assert.equal(answer.summary.accepted, 200);

  const [row] = await appDb(t, app).rows<{ body: Buffer; body_encoding: string | null; sha256: string }>(
    'SELECT body, body_encoding, sha256 FROM webhook_batches',
  );
  assert.equal(row?.body_encoding, 'gzip');
  assert.ok(row && row.body.length < text.length / 4, `kept in ${row?.body.length} bytes`);
  assert.equal(gunzipSync(row.body).toString('utf8'), text);
  assert.equal(row.sha256, createHash('sha256').update(text).digest('hex'));

  const receivedAt = new Date(answer.received_at);
  const { batches } = await app.deps.store.reconArchive.exportDay(
    businessDate(receivedAt),
    new Date(receivedAt.getTime() + 1000),
  );
  assert.deepEqual(
    batches.map((b) => b.body.toString('utf8')),
    [text],
  );
});

test('concurrent batches committed together: one failing batch fails alone, the others commit', async (t) => {
  const app = await startApp(t);
  await failInsertsOfBoom(t, app);

  const batches = Array.from({ length: 12 }, (_, i) =>
    i === 5 ? [bankRecord(), bankRecord({ orderno: 'BOOM' })] : [bankRecord(), bankRecord()],
  );
  const statuses = await Promise.all(
    batches.map(async (transactions) => (await app.postBatch({ transactions })).status),
  );
  assert.deepEqual(
    statuses,
    batches.map((_, i) => (i === 5 ? 500 : 200)),
  );
  const counts = await app.deps.store.bankPostings.counts();
  assert.equal(counts.postings, 22);
  assert.equal(counts.batches, 11);
  assert.equal(await app.deps.store.bankPostings.get('demo-bank', batches[5]?.[0]?.orderno ?? ''), undefined);
});
