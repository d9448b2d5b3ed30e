/**
 * What `amil queues` and a metrics scrape count costs no more as history grows (decision 238). The outbox
 * keeps every row it ever handed over and `callbacks` every callback ever delivered; counting either whole
 * took 370 ms (the outbox, at every `amil queues`) and 230 ms (the callbacks, at every scrape, on the web
 * process's event loop) per million rows on SQLite. Each count now reads an index range of the rows it
 * reports: what waits, failed or is unfinished, the callbacks an operator acts on, and the completed jobs
 * among the latest RECENT_OUTBOX_ROWS ids.
 */
import assert from 'node:assert/strict';
import { onBothEngines, type EngineStore } from '../support/engines.ts';
import { RECENT_OUTBOX_ROWS } from '../../core/store/outbox.ts';
import { OUTBOX_STATS_SQL } from '../../core/store/sqlite/outbox.ts';
import { OUTBOX_STATS } from '../../core/store/pg/outbox.ts';
import { CALLBACK_COUNTS_SQL } from '../../core/store/sqlite/ops.ts';
import { CALLBACK_COUNTS } from '../../core/store/pg/ops.ts';
import { paidOrders } from '../support/orders.ts';

const AT = '2026-11-20T02:00:00.000Z';

/** `n` outbox rows of `queue` numbered from `from`, in `state`, in multi-row inserts of 5,000. */
async function outboxRows(
  store: EngineStore,
  queue: string,
  from: number,
  n: number,
  state: 'waiting' | 'done' | 'failed' | 'unfinished',
): Promise<void> {
  const sent = state === 'done' || state === 'unfinished' ? `'${AT}'` : 'NULL';
  const done = state === 'done' ? `'${AT}'` : 'NULL';
  const failed = state === 'failed' ? `'${AT}'` : 'NULL';
  for (let first = from; first < from + n; first += 5000) {
    const count = Math.min(5000, from + n - first);
    const values = Array.from(
      { length: count },
      (_, k) => `('${queue}', '${queue}:${first + k}', '{}', '${AT}', ${sent}, ${done}, ${failed})`,
    );
    await store.write(
      `INSERT INTO outbox (queue, job_id, payload, created_at, sent_at, done_at, failed_at) VALUES ${values.join(', ')}`,
    );
  }
}

/** The plan of a statement without parameters, one line per step. */
async function planOf(store: EngineStore, sql: string): Promise<string> {
  if (store.engine === 'sqlite') {
    const rows = await store.sql<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`);
    return rows.map((r) => r.detail).join(' | ');
  }
  const rows = await store.sql<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`);
  return rows.map((r) => r['QUERY PLAN']).join(' | ');
}

onBothEngines(
  'the queue counts: waiting, failed and unfinished exactly; completed among the latest rows',
  async (_t, store) => {
    // Older history than the window: done rows of normalise, then the window's own rows.
    await outboxRows(store, 'normalise', 0, RECENT_OUTBOX_ROWS + 2000, 'done');
    await outboxRows(store, 'callbacks', 0, 5, 'done');
    await outboxRows(store, 'callbacks', 5, 3, 'waiting');
    await outboxRows(store, 'callbacks', 8, 2, 'failed');
    await outboxRows(store, 'ledger:LZS', 0, 4, 'unfinished');
    // A job handed to Redis that can never run: sent, and failed for good.
    await outboxRows(store, 'ledger:LZS', 4, 1, 'unfinished');
    await store.outbox.markFailedForGood('ledger:LZS:4', 'bad payload', new Date(AT));
    await outboxRows(store, 'normalise', RECENT_OUTBOX_ROWS + 2000, 1, 'waiting');
    const stats = new Map((await store.outbox.stats()).map((s) => [s.queue, s]));
    assert.deepEqual(stats.get('callbacks'), {
      queue: 'callbacks',
      waiting: 3,
      failed: 2,
      sent: 5,
      unfinished: 0,
    });
    assert.deepEqual(stats.get('ledger:LZS'), {
      queue: 'ledger:LZS',
      waiting: 0,
      failed: 1,
      sent: 5,
      unfinished: 4,
    });
    // The window: the latest RECENT_OUTBOX_ROWS ids, of which 16 are not normalise's and 1 is waiting.
    assert.deepEqual(stats.get('normalise'), {
      queue: 'normalise',
      waiting: 1,
      failed: 0,
      sent: RECENT_OUTBOX_ROWS - 16,
      unfinished: 0,
    });
    assert.deepEqual([...stats.keys()], ['callbacks', 'ledger:LZS', 'normalise'], 'by queue name');
  },
);

onBothEngines('each queue count reads an index range, never the whole outbox', async (_t, store) => {
  await outboxRows(store, 'normalise', 0, 30_000, 'done');
  await outboxRows(store, 'callbacks', 0, 20, 'waiting');
  await outboxRows(store, 'callbacks', 20, 5, 'failed');
  await store.write('ANALYZE');
  const statements: [string, string][] =
    store.engine === 'sqlite'
      ? Object.entries(OUTBOX_STATS_SQL)
      : Object.entries(OUTBOX_STATS).map(([name, sql]) => [name, sql.text]);
  for (const [name, text] of statements) {
    const plan = await planOf(store, text);
    if (store.engine === 'sqlite') {
      // A scan of an index or of a range of the rowid, never a plain "SCAN outbox" of every row.
      assert.doesNotMatch(plan, /SCAN outbox(?! USING)/, `${name}: ${plan}`);
      assert.match(plan, /USING (COVERING )?INDEX outbox_|USING INTEGER PRIMARY KEY/, `${name}: ${plan}`);
    } else {
      assert.doesNotMatch(plan, /Seq Scan on outbox/, `${name}: ${plan}`);
    }
  }
});

onBothEngines(
  'the callback counts are the callbacks an operator acts on, read from the state index',
  async (_t, store) => {
    await store.addAgency('LZS');
    // A paid order: its callback queued, not yet attempted.
    const [orderNo] = await paidOrders(store.orders, 'https://m.example/cb', 1);
    // Callbacks in every other state; delivered and superseded are history, no longer counted at a scrape.
    const rows: [string, number][] = [
      ['delivered', 1],
      ['delivered', 1],
      ['superseded', 0],
      ['queued', 3],
      ['dead', 8],
      ['gone', 1],
    ];
    await store.write(
      `INSERT INTO callbacks (order_no, agency_code, status, url, fields, created_at, state, attempts) VALUES ${rows
        .map(
          ([state, attempts]) =>
            `('${orderNo!}', 'LZS', 'paid', 'https://m.example/cb', '{}', '${AT}', '${state}', ${attempts})`,
        )
        .join(', ')}`,
    );
    // Enough history that PostgreSQL's planner prefers the index to reading the table.
    const history =
      store.engine === 'sqlite'
        ? 'WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 20000) SELECT i FROM s'
        : 'SELECT generate_series(1, 20000)';
    await store.write(
      `INSERT INTO callbacks (order_no, agency_code, status, url, fields, created_at, state, attempts)
       SELECT '${orderNo!}', 'LZS', 'paid', 'https://m.example/cb', '{}', '${AT}', 'delivered', 1 FROM (${history}) h`,
    );
    await store.write('ANALYZE');
    const counts = await store.ops.callbackCounts();
    assert.deepEqual(
      counts.map((c) => [c.state, c.attempts, Number(c.count)]),
      [
        ['dead', '5+', 1],
        ['gone', '1', 1],
        ['queued', '0', 1],
        ['queued', '2-4', 1],
      ],
    );
    const plan = await planOf(store, store.engine === 'sqlite' ? CALLBACK_COUNTS_SQL : CALLBACK_COUNTS.text);
    if (store.engine === 'sqlite')
      assert.match(plan, /SEARCH callbacks USING COVERING INDEX callbacks_by_state/, plan);
    else assert.match(plan, /callbacks_by_state/, plan);
  },
);
