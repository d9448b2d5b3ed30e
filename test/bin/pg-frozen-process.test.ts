/**
 * A web process frozen in the middle of a bank batch's transaction (a paused VM, a stopped process: here a
 * real SIGSTOP) holds the rows it locked. The bank, told nothing, sends the batch again to another web
 * process, whose statements wait on those locks. PostgreSQL ends the frozen session once it has sat idle in
 * its transaction for DATABASE_IDLE_TRANSACTION_MS (decision 263): the locks go, the resend is stored, and
 * the frozen process, woken, answers 503, never 200 for what it did not commit. Each posting is stored once.
 */
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { test } from 'node:test';
import { openPgPool } from '../../core/store/pg/pool.ts';
import { DEMO_PASSWORD, bankRecord, tempDir } from '../helpers.ts';
import { startPostgres } from '../support/postgres.ts';
import { startServer } from './processes.ts';

/** How long the frozen process's session may sit idle in its transaction (the default is 60 s). */
const IDLE_TRANSACTION_MS = 3000;

const post = (url: string, transactions: unknown[]) =>
  fetch(`${url}/api/bank/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD },
    body: JSON.stringify({ transactions }),
  });

test('a web process frozen inside a batch transaction holds nobody up for long: its session is ended, the resend stored once', async (t) => {
  const pg = await startPostgres(t);
  const url = await pg.createTestDatabase();
  const env = { DATABASE_URL: url, DATABASE_IDLE_TRANSACTION_MS: String(IDLE_TRANSACTION_MS) };
  const frozen = await startServer({ ...env, DATA_DIR: tempDir(t) });
  t.after(() => frozen.child.kill('SIGKILL'));
  const other = await startServer({ ...env, DATA_DIR: tempDir(t) });
  t.after(() => other.child.kill('SIGKILL'));
  const db = openPgPool(url);
  t.after(() => db.close());

  // A posting stored earlier, and the batch that brings it again with a new one.
  const earlier = bankRecord({ status: 'pending' });
  assert.equal((await post(other.url, [earlier])).status, 200);
  const fresh = bankRecord();
  const batch = [fresh, { ...earlier, status: 'success' }];

  // Where to freeze it: the batch's transaction locks the earlier posting after inserting the new one. A
  // lock taken here first makes it wait there, so the SIGSTOP lands inside the transaction, every time.
  const holder = await db.pool.connect();
  await holder.query('BEGIN');
  await holder.query('SELECT 1 FROM bank_postings WHERE orderno = $1 FOR UPDATE', [earlier.orderno]);
  const answer = post(frozen.url, batch).then(
    (r) => r.status,
    () => 0,
  );
  const session = `amil server ${frozen.child.pid} ${hostname()}`;
  for (let waited = 0; ; waited += 20) {
    const waiting = await db.rows(
      "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
      [session],
    );
    if (waiting.length > 0) break;
    assert.ok(waited < 10_000, 'the batch never reached the lock');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  frozen.child.kill('SIGSTOP');
  await holder.query('ROLLBACK');
  holder.release();

  // The bank sends the batch again to the other web process, after each refusal, as it does in production.
  const started = Date.now();
  let status = 0;
  const refusals: number[] = [];
  while (Date.now() - started < 20_000) {
    const response = await post(other.url, batch);
    status = response.status;
    if (status === 200) break;
    refusals.push(status);
    await response.text();
  }
  assert.equal(status, 200, `the resend was refused ${refusals.length} times (${refusals.join(', ')})`);
  assert.ok(
    refusals.every((s) => s === 503),
    `only "try again later" before: ${refusals.join(', ')}`,
  );

  // Woken, the frozen process cannot commit what its session lost: it answers 503, never 200.
  frozen.child.kill('SIGCONT');
  assert.equal(await answer, 503);
  const stored = await db.rows<{ orderno: string; status: string; version: number }>(
    'SELECT orderno, status, version FROM bank_postings WHERE orderno = ANY($1) ORDER BY orderno',
    [[earlier.orderno, fresh.orderno]],
  );
  assert.deepEqual(
    stored,
    [
      { orderno: earlier.orderno, status: 'success', version: 2 },
      { orderno: fresh.orderno, status: 'success', version: 1 },
    ].sort((a, b) => (a.orderno < b.orderno ? -1 : 1)),
  );
  const batches = await db.rows<{ n: number }>('SELECT count(*)::int AS n FROM webhook_batches');
  assert.deepEqual(batches, [{ n: 2 }], 'the first post and the resend; nothing of the frozen one');
});
