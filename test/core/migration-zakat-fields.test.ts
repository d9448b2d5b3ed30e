// Migration 013 keeps the bank's data.email in the normalised row. An installation upgraded with postings
// already normalised gets it back from the raw records it stored: every version, updated postings included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { fixedClock } from '../../core/clock.ts';
import { openStore } from '../../core/store/index.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { bankRecord, onCleanup, startApp } from '../helpers.ts';
import { onPostgres } from '../support/test-database.ts';

const NOW = new Date('2026-11-20T12:00:00+08:00');

test(
  'postings normalised before migration 013 get data_email back from their stored raw records',
  { skip: onPostgres && 'SQLite only: it tests a SQLite migration' },
  async (t) => {
    const app = await startApp(t, {}, { clock: fixedClock(NOW) });
    const pending = bankRecord({ orderno: 'MIG-1', status: 'pending' });
    pending.data = { ...pending.data, email: 'Keluarga@Example.MY' };
    const plain = bankRecord({ orderno: 'MIG-2' });
    plain.data = { ...plain.data, email: 'second@example.my' };
    const without = bankRecord({ orderno: 'MIG-3' });
    delete without.data.email;
    assert.equal((await app.postBatch({ transactions: [pending, plain, without] })).status, 200);
    // MIG-1 settles: version 2, and both versions move to the history table.
    assert.equal((await app.postBatch({ transactions: [{ ...pending, status: 'success' }] })).status, 200);
    await createInProcessRuntime(app.deps).drain();

    // The installation as it was before 013: no column, the migration not applied.
    const raw = new Database(app.deps.config.databaseFile);
    onCleanup(t, () => raw.close());
    raw.exec('ALTER TABLE normalised_postings DROP COLUMN data_email');
    raw.prepare(`DELETE FROM schema_migrations WHERE name = '013_zakat_fields.sql'`).run();

    const upgraded = openStore(app.deps.config.databaseFile);
    onCleanup(t, () => upgraded.close());
    assert.deepEqual(
      raw
        .prepare(
          'SELECT orderno, version, data_email AS dataEmail FROM normalised_postings ORDER BY orderno, version',
        )
        .all(),
      [
        { orderno: 'MIG-1', version: 1, dataEmail: 'keluarga@example.my' },
        { orderno: 'MIG-1', version: 2, dataEmail: 'keluarga@example.my' },
        { orderno: 'MIG-2', version: 1, dataEmail: 'second@example.my' },
        { orderno: 'MIG-3', version: 1, dataEmail: null },
      ],
    );
  },
);
