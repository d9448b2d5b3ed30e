import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openDatabase } from '../../core/store/sqlite/db.ts';
import { tempDir } from '../helpers.ts';

test('the store opens in WAL mode with synchronous=FULL and foreign keys on', (t) => {
  const db = openDatabase(path.join(tempDir(t), 'nested', 'amil.db'));
  t.after(() => db.close());
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(db.pragma('synchronous', { simple: true }), 2, 'FULL');
  assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
});

test('migrations apply once, however many times or processes open the file', (t) => {
  const file = path.join(tempDir(t), 'amil.db');
  const first = openDatabase(file);
  const second = openDatabase(file);
  t.after(() => {
    first.close();
    second.close();
  });
  const names = second.prepare('SELECT name FROM schema_migrations ORDER BY name').pluck().all();
  assert.ok(names.includes('001_foundation.sql'));
  assert.equal(new Set(names).size, names.length);
  const tables = first.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
  for (const table of [
    'partners',
    'partner_passwords',
    'agencies',
    'webhook_batches',
    'bank_postings',
    'anomalies',
  ]) {
    assert.ok(tables.includes(table), table);
  }
});
