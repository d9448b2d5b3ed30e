import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { bankRecord, DEMO_PASSWORD, problemOf, startApp } from '../helpers.ts';

test('bank webhook status codes', async (t) => {
  const app = await startApp(t, { WEBHOOK_MAX_BODY_BYTES: '20000', WEBHOOK_MAX_RECORDS: '10' });

  await t.test('401 without X-API-Password, with no detail', async () => {
    const response = await fetch(`${app.url}/api/bank/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ transactions: [bankRecord()] }),
    });
    assert.equal(response.status, 401);
    const problem = await problemOf(response);
    assert.equal(problem.type, 'https://docs.amil.my/problems/unauthorized');
    assert.equal(problem.detail, undefined);
  });

  await t.test('401 with a wrong password, an empty one, or one differing only in case', async () => {
    for (const password of [
      'wrong-password',
      '',
      DEMO_PASSWORD.toUpperCase(),
      `${DEMO_PASSWORD}x`,
      'x'.repeat(5000),
    ]) {
      const response = await app.postBatch({ transactions: [bankRecord()] }, { 'x-api-password': password });
      assert.equal(response.status, 401, JSON.stringify(password.slice(0, 30)));
    }
  });

  await t.test('401 comes before any look at the body', async () => {
    const response = await app.postBatch('{not json', { 'x-api-password': 'wrong' });
    assert.equal(response.status, 401);
  });

  await t.test('415 for a body that is not application/json', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const response = await app.postBatch(JSON.stringify({ transactions: [bankRecord()] }), {
        'content-type': type,
      });
      assert.equal(response.status, 415, type);
      assert.equal((await problemOf(response)).type, 'https://docs.amil.my/problems/unsupported-media-type');
    }
  });

  await t.test('accepts application/json with a charset parameter', async () => {
    const response = await app.postBatch(
      { transactions: [bankRecord()] },
      {
        'content-type': 'application/json; charset=utf-8',
      },
    );
    assert.equal(response.status, 200);
  });

  await t.test('400 for malformed JSON, an empty body, and invalid UTF-8', async () => {
    const before = await app.deps.store.bankPostings.counts();
    for (const body of ['{"transactions": [', '', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])]) {
      const response = await app.postBatch(body);
      assert.equal(response.status, 400);
      assert.equal((await problemOf(response)).type, 'https://docs.amil.my/problems/malformed-json');
    }
    assert.deepEqual(await app.deps.store.bankPostings.counts(), before);
  });

  await t.test('413 for a body over the byte limit, declared or streamed', async () => {
    const before = await app.deps.store.bankPostings.counts();
    const big = JSON.stringify({ transactions: [bankRecord({ name: 'x'.repeat(30000) })] });
    const declared = await app.postBatch(big);
    assert.equal(declared.status, 413);
    assert.equal((await problemOf(declared)).type, 'https://docs.amil.my/problems/payload-too-large');

    // Chunked, so no Content-Length tells the server in advance.
    const streamed = await new Promise<number>((resolve, reject) => {
      const req = request(`${app.url}/api/bank/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      for (let i = 0; i < 30; i++) req.write(' '.repeat(1000));
      req.end('{}');
    });
    assert.equal(streamed, 413);
    assert.deepEqual(await app.deps.store.bankPostings.counts(), before);
  });

  await t.test('413 for more records than the limit, even when each is valid', async () => {
    const transactions = Array.from({ length: 11 }, () => bankRecord({ data: {} }));
    const response = await app.postBatch({ transactions });
    assert.equal(response.status, 413);
    const problem = await problemOf(response);
    assert.equal(problem.type, 'https://docs.amil.my/problems/too-many-records');
    assert.match(problem.detail ?? '', /at most 10 records/);
    const atLimit = await app.postBatch({ transactions: transactions.slice(0, 10) });
    assert.equal(atLimit.status, 200);
  });

  await t.test('405 for another method on the webhook path; 404 elsewhere', async () => {
    const get = await fetch(`${app.url}/api/bank/webhook`);
    assert.equal(get.status, 405);
    assert.match(get.headers.get('allow') ?? '', /POST/);
    const missing = await fetch(`${app.url}/api/bank/nope`, { method: 'POST' });
    assert.equal(missing.status, 404);
    assert.equal((await problemOf(missing)).status, 404);
  });

  await t.test('echoes a sane X-Request-Id and puts it in problems', async () => {
    const response = await app.postBatch('{', { 'x-request-id': 'bank-req-42' });
    assert.equal(response.headers.get('x-request-id'), 'bank-req-42');
    assert.equal(((await response.json()) as { request_id: string }).request_id, 'bank-req-42');
    const generated = await app.postBatch('{', { 'x-request-id': 'bad id with spaces' });
    assert.match(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });

  await t.test('never refused anything into the store', async () => {
    const counts = await app.deps.store.bankPostings.counts();
    assert.equal(counts.batches, 2, 'only the two accepted batches were archived');
    assert.equal(counts.postings, 11);
  });
});
