/**
 * A batch's rows go into PostgreSQL the first time without asking, row by row, whether each is there:
 * normalised rows with COPY (decision 221), ledger entries with a plain INSERT (decision 222). What makes
 * that safe: a save that finds the batch saved inserts with ON CONFLICT, and a first write that meets rows
 * committed by the same write running elsewhere at once is run again as such.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { prepareRecord } from '../../ingest/bank-webhook/prepare.ts';
import { bankRecord } from '../helpers.ts';
import { batchInput, normalisedRows } from '../support/batches.ts';
import { storeWithTwoSessions } from '../support/pg-stores.ts';

const ROUTES = { BANKLZS: { kind: 'agency', agency: 'LZS' } } as const;
const NOW = new Date('2026-11-20T02:00:00.000Z');

/**
 * A PostgreSQL store holding one stored batch of three LZS postings, its versions as normalised rows, and
 * two connections of another process: `other` to write and hold a transaction open, `watcher` to look at
 * the server's activity from outside it (inside a transaction PostgreSQL reads that activity only once).
 */
async function batchWithAnotherProcess(t: TestContext) {
  const { store, first: other, second: watcher } = await storeWithTwoSessions(t);
  await store.partners.addPassword({ partnerId: 'demo-bank', label: 'main', hash: 'h1', now: NOW });
  const records = [1, 2, 3].map(() => prepareRecord(bankRecord(), ROUTES));
  const { batch_id: batchId } = await store.bankPostings.ingestBatch(batchInput(records));
  const rows = normalisedRows(await store.ledger.batchVersions(batchId), batchId);
  /** Waits until `countSql`, run by the watcher, counts one; fails after 10 s with `never`. */
  const untilOne = async (countSql: string, never: string): Promise<void> => {
    for (let waited = 0; ; waited += 20) {
      const { rows: counted } = await watcher.query<{ n: string }>(countSql);
      if (counted[0]?.n === '1') return;
      assert.ok(waited < 10_000, never);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { store, other, batchId, rows, untilOne };
}

test('a save whose copy waits behind the same rows committed by another process stores each row once', async (t) => {
  const { store, other, batchId, rows, untilOne } = await batchWithAnotherProcess(t);
  assert.equal(rows.length, 3);

  // Another worker's save of the same batch, its first row written and not yet committed.
  const first = rows[0]!;
  await other.query('BEGIN');
  await other.query(
    `INSERT INTO normalised_postings (posting_id, version, batch_id, sink, orderno, bank_agency, status,
       amount_sen, name, email, time_utc, business_date, received_date, exceptions, normalised_at)
     VALUES ($1, $2, $3, $4, 'x', 'BANKLZS', 'success', 15050, 'the other worker', 'n@example.my', $5,
       '2026-11-20', '2026-11-20', '[]', $5)`,
    [first.postingId, first.version, batchId, first.sink, NOW.toISOString()],
  );
  // This save finds no row committed, so it copies, and the copy waits on the uncommitted key.
  const saving = store.ledger.saveNormalised(rows, [], NOW);
  // Waiting as a COPY (pg_stat_progress_copy), not as an INSERT, which would wait on the key the same way.
  await untilOne(
    `SELECT count(*) AS n FROM pg_stat_progress_copy c JOIN pg_stat_activity a USING (pid)
     WHERE c.relid = 'normalised_postings'::regclass AND c.command = 'COPY FROM'
       AND a.wait_event = 'transactionid'`,
    'the copy never waited on the other save',
  );
  await other.query('COMMIT');
  await saving;

  const { rows: stored } = await other.query<{ posting_id: string; name: string }>(
    'SELECT posting_id, name FROM normalised_postings ORDER BY posting_id',
  );
  assert.deepEqual(
    stored.map((r) => [Number(r.posting_id), r.name]),
    rows.map((r) => [r.postingId, r.postingId === first.postingId ? 'the other worker' : 'Nur']),
    "each row once; the other worker's row as it wrote it",
  );
  await store.ledger.appendFromBatch(batchId, 'LZS', NOW);
  assert.equal((await store.ledger.entries('LZS')).length, 3);
});

test('an append that waits behind the same entries committed by another process stores each entry once', async (t) => {
  const { store, other, batchId, rows, untilOne } = await batchWithAnotherProcess(t);
  await store.ledger.saveNormalised(rows, [], NOW);

  // Another worker's append of the same share, its first entry written and not yet committed.
  const first = rows[0]!;
  await other.query('BEGIN');
  await other.query(
    `INSERT INTO ledger_entries (sink, posting_id, version, business_date, received_date, is_adjustment,
       status, amount_sen, exceptions, created_at, received_at)
     VALUES ('LZS', $1, $2, '2026-11-20', '2026-11-20', 0, 'the other worker', 1, '[]', $3, $3)`,
    [first.postingId, first.version, NOW.toISOString()],
  );
  // This append inserts without ON CONFLICT, and waits on the uncommitted key.
  const appending = store.ledger.appendFromBatch(batchId, 'LZS', NOW);
  await untilOne(
    `SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event = 'transactionid'
       AND query LIKE 'INSERT INTO ledger_entries%' AND query NOT LIKE '%ON CONFLICT%'`,
    'no plain insert ever waited on the other append',
  );
  await other.query('COMMIT');
  await appending;

  const entries = await store.ledger.entries('LZS');
  assert.deepEqual(
    entries.map((e) => [e.postingId, e.status]),
    rows.map((r) => [r.postingId, r.postingId === first.postingId ? 'the other worker' : 'success']),
    "each entry once; the other worker's entry as it wrote it",
  );
  // Run again (a job handed back after its worker died): nothing more, and no error.
  await store.ledger.appendFromBatch(batchId, 'LZS', NOW);
  assert.equal((await store.ledger.entries('LZS')).length, 3);
});
