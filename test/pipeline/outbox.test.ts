import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp } from '../helpers.ts';
import { appDb } from '../support/app-db.ts';

test("the outbox hands out each queue's oldest rows, so one queue's backlog never hides another's work", async (t) => {
  const app = await startApp(t);
  const db = appDb(t, app);
  const insert = (queue: string, jobId: string) =>
    db.run(`INSERT INTO outbox (queue, job_id, payload, created_at) VALUES (?, ?, '{}', ?)`, [
      queue,
      jobId,
      new Date().toISOString(),
    ]);
  for (let i = 0; i < 5; i += 1) await insert('ledger-LZS', `ledger-LZS.${i}`);
  await insert('ledger-PPZ', 'ledger-PPZ.0');
  const rows = await app.deps.store.outbox.pending(2, new Date());
  assert.deepEqual(
    rows.map((r) => r.jobId),
    ['ledger-LZS.0', 'ledger-LZS.1', 'ledger-PPZ.0'],
  );
});
