// Migration 020 counts each agency's ledger per business day (decision 234). An installation upgraded with a
// ledger already filled gets the counts of what it holds, by the report's own rule: each posting once, on
// its latest version's day; and the trigger keeps them as the pipeline appends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { fixedClock } from '../../core/clock.ts';
import { openStore } from '../../core/store/index.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { bankRecord, onCleanup, startApp } from '../helpers.ts';
import { onPostgres } from '../support/test-database.ts';

const NOW = new Date('2026-11-21T12:00:00+08:00');
const COUNTS = 'SELECT sink, business_date AS day, n FROM ledger_day_counts WHERE n > 0 ORDER BY sink, day';

test(
  'an upgraded ledger is counted per agency and day by migration 020, as the trigger counts new entries',
  { skip: onPostgres && 'SQLite only: PostgreSQL counts the ledger when a report asks' },
  async (t) => {
    const app = await startApp(t, {}, { clock: fixedClock(NOW) });
    const settles = bankRecord({ orderno: 'CNT-1', status: 'pending', time: '2026-11-20T22:00:00+08:00' });
    const batch = [
      settles,
      bankRecord({ orderno: 'CNT-2', time: '2026-11-20T09:00:00+08:00' }),
      bankRecord({ orderno: 'CNT-3', time: '2026-11-21T09:00:00+08:00' }),
      bankRecord({ orderno: 'CNT-4', agency: 'BANKPPZ', time: '2026-11-21T10:00:00+08:00' }),
    ];
    assert.equal((await app.postBatch({ transactions: batch })).status, 200);
    // CNT-1 settles the next day: version 2, still on its posting's business day.
    assert.equal((await app.postBatch({ transactions: [{ ...settles, status: 'success' }] })).status, 200);
    await createInProcessRuntime(app.deps).drain();

    const raw = new Database(app.deps.config.databaseFile);
    onCleanup(t, () => raw.close());
    const expected = [
      { sink: 'LZS', day: '2026-11-20', n: 2 },
      { sink: 'LZS', day: '2026-11-21', n: 1 },
      { sink: 'PPZ', day: '2026-11-21', n: 1 },
    ];
    assert.deepEqual(raw.prepare(COUNTS).all(), expected, 'kept by the trigger');
    const report = await app.deps.store.zakatReport.page({
      sink: 'LZS',
      start: '2026-11-20',
      end: '2026-11-21',
      limit: 10,
      offset: 0,
    });
    assert.equal(report.total, 3);
    assert.deepEqual(
      report.rows.map((r) => r.orderno),
      ['CNT-1', 'CNT-2', 'CNT-3'],
    );

    // The installation as it was before 020: no counts, the migration not applied.
    raw.exec('DROP TRIGGER ledger_day_count; DROP TABLE ledger_day_counts');
    raw.prepare(`DELETE FROM schema_migrations WHERE name = '020_ledger_day_counts.sql'`).run();
    const upgraded = openStore(app.deps.config.databaseFile);
    onCleanup(t, () => upgraded.close());
    assert.deepEqual(raw.prepare(COUNTS).all(), expected, 'counted by the migration');
  },
);
