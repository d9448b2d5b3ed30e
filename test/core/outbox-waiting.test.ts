/**
 * The outbox's waiting rows by queue (decision 236). The runtimes look at the outbox every poll; a look used
 * to read every waiting row of every queue (a big bank batch, normalise rows; a merchant down for a day left
 * callbacks scheduled for later, before decision 264). Now it reads its queues' own index ranges: a backlog
 * in one queue costs another queue nothing, and a look reads at most what it returns (plus rows scheduled
 * for later among them).
 */
import assert from 'node:assert/strict';
import { onBothEngines, onPostgres, type EngineStore } from '../support/engines.ts';
import { OUTBOX_PENDING_SQL } from '../../core/store/sqlite/outbox.ts';
import { PENDING } from '../../core/store/pg/outbox.ts';

const NOW = new Date('2026-11-20T02:00:00.000Z');
const LATER = '2026-11-21T02:00:00.000Z';

/** The plan of `sql` with its parameters as literals (each `?` in turn, or `$n`), one line per step. */
async function planOf(store: EngineStore, sql: string, literals: string[]): Promise<string[]> {
  if (store.engine === 'sqlite') {
    let next = 0;
    const text = sql.replace(/\?/g, () => literals[next++]!);
    const rows = await store.sql<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`);
    return rows.map((r) => r.detail);
  }
  const text = sql.replace(/\$(\d+)/g, (_m, n: string) => literals[Number(n) - 1]!);
  const rows = await store.sql<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`);
  return rows.map((r) => r['QUERY PLAN']);
}

/** A backlog: `n` normalise rows, every other one scheduled for tomorrow, then a few rows of two more queues. */
async function backlog(store: EngineStore, n: number): Promise<void> {
  const values = (queue: string, from: number, to: number, later: (i: number) => boolean) =>
    Array.from(
      { length: to - from },
      (_, k) =>
        `('${queue}', '${queue}:${from + k}', '{}', '${NOW.toISOString()}', ` +
        `${later(from + k) ? `'${LATER}'` : 'NULL'})`,
    ).join(', ');
  for (let from = 0; from < n; from += 5000)
    await store.write(
      `INSERT INTO outbox (queue, job_id, payload, created_at, next_try_at) VALUES ${values('normalise', from, Math.min(n, from + 5000), (i) => i % 2 === 1)}`,
    );
  await store.write(
    `INSERT INTO outbox (queue, job_id, payload, created_at, next_try_at) VALUES ${values('receipts', 0, 30, () => false)}`,
  );
  await store.write(
    `INSERT INTO outbox (queue, job_id, payload, created_at, next_try_at) VALUES ${values('ledger:LZS', 0, 3, () => false)}`,
  );
  await store.write('ANALYZE');
}

onBothEngines(
  'a look at the outbox takes each queue oldest first, at most its share, and due rows only',
  async (_t, store) => {
    await backlog(store, 2000);
    const rows = await store.outbox.pending(500, NOW);
    const byQueue = (queue: string) => rows.filter((r) => r.queue === queue).map((r) => r.jobId);
    assert.equal(byQueue('normalise').length, 500);
    // Due only (every even one), oldest first.
    assert.deepEqual(byQueue('normalise').slice(0, 3), ['normalise:0', 'normalise:2', 'normalise:4']);
    assert.equal(byQueue('receipts').length, 30);
    assert.deepEqual(byQueue('ledger:LZS'), ['ledger:LZS:0', 'ledger:LZS:1', 'ledger:LZS:2']);
    assert.deepEqual(
      rows.map((r) => r.id),
      [...rows.map((r) => r.id)].sort((a, b) => a - b),
      'in id order',
    );
    // A relay leaving one queue alone (the callbacks', decision 264) reads the rest, all of it.
    let handed: string[] = [];
    await store.outbox.handOver(
      500,
      NOW,
      (taken) => {
        handed = taken.map((r) => r.queue);
        return Promise.resolve();
      },
      'receipts',
    );
    assert.deepEqual(new Set(handed), new Set(['normalise', 'ledger:LZS']));
    assert.equal(handed.length, 503);
  },
);

onBothEngines("the look reads the waiting rows through each queue's own index range", async (_t, store) => {
  await backlog(store, 20_000);
  const sqlite = store.engine === 'sqlite';
  const at = sqlite ? `'${NOW.toISOString()}'` : `'${NOW.toISOString()}'::timestamptz`;
  for (const [name, sql, literals] of [
    ['look', sqlite ? OUTBOX_PENDING_SQL : PENDING.text, [at, '500', 'NULL']],
  ] as const) {
    const plan = await planOf(store, sql, [...literals]);
    const text = plan.join(' | ');
    if (store.engine === 'sqlite') {
      assert.ok(
        plan.some((s) => s.includes('USING INDEX outbox_waiting (queue=?)')),
        `${name}: ${text}`,
      );
      assert.ok(!plan.some((s) => /^SCAN (outbox|o|w)\b/.test(s)), `${name} scans the outbox: ${text}`);
    } else {
      assert.match(text, /outbox_waiting[^|]*\|\s*Index Cond: \(+queue >?= /, `${name}: ${text}`);
      assert.doesNotMatch(text, /Seq Scan on outbox/, `${name} scans the outbox: ${text}`);
    }
  }
});

// Decision 256. Statistics taken while nearly every outbox row waited (a backlog that arrived faster than it
// drained, then ANALYZE) made the planner read through the primary key and filter: each read then walked
// every row done since, and a drain of N rows read about N x N / 64 rows. A look must read the waiting
// rows' own index whatever the statistics say (callbacks_due, decision 264: test/core/callback-lease-plan).
onPostgres(
  'a look reads the waiting index even when the statistics say nearly every row waits',
  async (_t, store) => {
    const values = (from: number, to: number) =>
      Array.from(
        { length: to - from },
        (_, k) => `('receipts', 'receipts:${from + k}', '{}', '${NOW.toISOString()}', NULL)`,
      ).join(', ');
    for (let from = 0; from < 20_000; from += 5000)
      await store.write(
        `INSERT INTO outbox (queue, job_id, payload, created_at, next_try_at) VALUES ${values(from, from + 5000)}`,
      );
    await store.write('ANALYZE outbox');
    // Most of the backlog delivered since the statistics were taken (not analysed again).
    await store.write(
      `UPDATE outbox SET sent_at = '${NOW.toISOString()}', done_at = '${NOW.toISOString()}'
     WHERE job_id IN (SELECT 'receipts:' || i FROM generate_series(0, 14999) AS i)`,
    );
    const at = `'${NOW.toISOString()}'::timestamptz`;
    for (const [name, sql, literals] of [
      ['look', PENDING.text, [at, '500', 'NULL']],
      ['look leaving one queue', PENDING.text, [at, '500', `'receipts'`]],
    ] as const) {
      const plan = await planOf(store, sql, [...literals]);
      const text = plan.join(' | ');
      assert.ok(
        plan.some((step) => /Index (Only )?Scan using outbox_waiting/.test(step)),
        `${name}: ${text}`,
      );
      // The primary key only to fetch the rows chosen, by id: never walked in order and filtered.
      plan.forEach((step, i) => {
        if (/Scan using outbox_pkey/.test(step))
          assert.match(plan[i + 1] ?? '', /Index Cond: \(id = /, `${name} walks the primary key: ${text}`);
      });
    }
    const looked = await store.outbox.pending(500, NOW);
    assert.equal(looked[0]?.jobId, 'receipts:15000');
    assert.equal(looked.length, 500);
  },
);
