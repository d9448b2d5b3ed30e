import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { onCleanup, startApp } from '../helpers.ts';

test("the outbox hands out each queue's oldest rows, so one queue's backlog never hides another's work", async (t) => {
  const app = await startApp(t);
  const db = new Database(app.deps.config.databaseFile);
  onCleanup(t, () => db.close());
  const insert = db.prepare(
    `INSERT INTO outbox (queue, job_id, payload, created_at) VALUES (?, ?, '{}', '')`,
  );
  for (let i = 0; i < 5; i += 1) insert.run('ledger-LZS', `ledger-LZS.${i}`);
  insert.run('ledger-PPZ', 'ledger-PPZ.0');
  const rows = await app.deps.store.outbox.pending(2, new Date());
  assert.deepEqual(
    rows.map((r) => r.jobId),
    ['ledger-LZS.0', 'ledger-LZS.1', 'ledger-PPZ.0'],
  );
});
