import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { fixedClock } from '../../core/clock.ts';
import { bankRecord, reportToken, startApp } from '../helpers.ts';

const NOW = new Date('2026-11-20T12:00:00+08:00');
/** More than the store's 1,000-row chunk, so the stream crosses chunk boundaries. */
const ROWS = 2500;

test('the zakat report with items=-1 is streamed, with the same JSON as its pages', async (t) => {
  const app = await startApp(t, {}, { clock: fixedClock(NOW) });
  const transactions = Array.from({ length: ROWS }, (_, i) =>
    bankRecord({ orderno: `Z-${String(i).padStart(5, '0')}`, agency: i % 10 === 0 ? 'BANKPPZ' : 'BANKLZS' }),
  );
  assert.equal((await app.postBatch({ transactions })).status, 200);
  await createInProcessRuntime(app.deps).drain();
  const auth = { authorization: `Bearer ${await reportToken(app, ['LZS'], NOW)}` };
  const url = `${app.url}/api/report/v1/zakat?start=2026-11-20`;

  const response = await fetch(`${url}&items=-1`, { headers: auth });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
  // A body built whole is sent with its length; a streamed one in chunks, its length unknown up front.
  assert.equal(response.headers.get('content-length'), null);
  assert.equal(response.headers.get('transfer-encoding'), 'chunked');
  const reader = response.body!.getReader();
  const chunks: Uint8Array[] = [];
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    chunks.push(read.value as Uint8Array);
  }
  assert.ok(chunks.length > 1, `arrived in ${chunks.length} chunk(s)`);
  const streamed = Buffer.concat(chunks).toString('utf8');

  const pages: unknown[] = [];
  for (let page = 0; page * 1000 < ROWS; page += 1) {
    const body = (await (await fetch(`${url}&items=1000&page=${page}`, { headers: auth })).json()) as {
      data: unknown[];
    };
    pages.push(...body.data);
  }
  const lzs = ROWS - ROWS / 10;
  assert.equal(pages.length, lzs);
  const expected = JSON.stringify({
    status: 'OK',
    data: pages,
    stats: { total_pages: 1, total_rows: lzs, page: 0, items: -1 },
  });
  assert.equal(streamed, expected);
});
