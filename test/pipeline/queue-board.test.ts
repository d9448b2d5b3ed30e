import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listen } from '../../core/http/serve.ts';
import { createWebApp } from '../../bin/create-app.ts';
import { queueBoard } from '../../pipeline/queue-board.ts';
import { createBullRuntime } from '../../pipeline/bullmq/runtime.ts';
import { bankRecord, onCleanup, startApp } from '../helpers.ts';
import { startRedis } from '../support/redis.ts';

test('Bull Board is behind the admin password, read-only, and shows job ids but no payer data', async (t) => {
  const redis = await startRedis(t);
  const app = await startApp(t, {
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
    ADMIN_PASSWORD: 'board-password-1',
  });
  const board = queueBoard(app.deps);
  assert.ok(board);
  onCleanup(t, () => board.close());
  const listening = await listen([
    {
      name: 'reports',
      app: createWebApp(app.deps, ['reports'], { middleware: [board.middleware] }),
      host: '127.0.0.1',
      port: 0,
    },
  ]);
  onCleanup(t, () => listening.close(1000));
  const url = listening.servers[0]?.url ?? '';

  // One batch through the pipeline, so the board has a job to show.
  const record = bankRecord();
  await app.postBatch({ transactions: [record] });
  const runtime = createBullRuntime(app.deps);
  runtime.start();
  onCleanup(t, () => runtime.stop());
  await runtime.drain();

  const anonymous = await fetch(`${url}/admin/queues`);
  assert.equal(anonymous.status, 401);
  assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Basic realm="amil admin"/);
  const wrong = await fetch(`${url}/admin/queues`, {
    headers: { authorization: `Basic ${btoa('admin:nope')}` },
  });
  assert.equal(wrong.status, 401);

  const auth = { authorization: `Basic ${btoa('admin:board-password-1')}` };
  const page = await fetch(`${url}/admin/queues`, { headers: auth });
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<html/i);

  const api = await fetch(`${url}/admin/queues/api/queues?activeQueue=normalise&status=completed`, {
    headers: auth,
  });
  assert.equal(api.status, 200);
  const text = await api.text();
  const body = JSON.parse(text) as {
    queues: { name: string; readOnlyMode: boolean; jobs: { data: unknown }[] }[];
  };
  const normalise = body.queues.find((q) => q.name === 'normalise');
  assert.equal(normalise?.readOnlyMode, true);
  assert.deepEqual(Object.keys(normalise?.jobs[0]?.data as object), ['batchId']);
  for (const secret of [record.name, record.email, record.data.zakat_ic_no ?? 'x'])
    assert.ok(!text.includes(secret));
});
