import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openStore } from '../../core/store/index.ts';
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

test("an agency's settings or key changed by another process are read by the very next read", async (t) => {
  const file = path.join(tempDir(t), 'amil.db');
  const web = openStore(file);
  // Another process (the CLI, the dashboard of another web process): its own connection to the file.
  const cli = openStore(file);
  t.after(async () => {
    await web.close();
    await cli.close();
  });
  const now = new Date('2026-11-20T02:00:00.000Z');
  const key = '11111111-2222-4333-8444-555555555555';
  await cli.agencies.create({
    code: 'LZS',
    name: 'Lembaga Zakat Selangor',
    apiKey: key,
    settings: { callbackHosts: ['merchant.test'] },
    now,
  });
  assert.deepEqual((await web.agencies.get('LZS'))?.settings.callbackHosts, ['merchant.test']);
  assert.equal(await web.agencies.apiKeyOf('LZS'), key);

  await cli.agencies.update('LZS', {
    name: 'LZS',
    settings: { callbackHosts: ['shop.test'], acceptUnsignedOrders: true },
  });
  const newKey = '99999999-2222-4333-8444-555555555555';
  await cli.agencies.rotateKey('LZS', newKey, now);
  const changed = await web.agencies.get('LZS');
  assert.equal(changed?.name, 'LZS');
  assert.deepEqual(changed?.settings.callbackHosts, ['shop.test']);
  assert.equal(changed?.settings.acceptUnsignedOrders, true);
  assert.equal(await web.agencies.apiKeyOf('LZS'), newKey);
});

test('the settings a read of an agency returns cannot be changed by the code that read them', async (t) => {
  const store = openStore(path.join(tempDir(t), 'amil.db'));
  t.after(() => store.close());
  await store.agencies.create({
    code: 'LZS',
    name: 'Lembaga Zakat Selangor',
    apiKey: '11111111-2222-4333-8444-555555555555',
    settings: { paymentCategories: ['fitrah'] },
    now: new Date('2026-11-20T02:00:00.000Z'),
  });
  const first = await store.agencies.get('LZS');
  assert.throws(() => first?.settings.paymentCategories.push('wang'), TypeError);
  assert.throws(() => {
    if (first) first.settings.callbackHosts = ['evil.test'];
  }, TypeError);
  const again = await store.agencies.get('LZS');
  assert.deepEqual(again?.settings.paymentCategories, ['fitrah']);
  assert.deepEqual(again?.settings.callbackHosts, []);
  // The defaults the settings start from stay untouched for agencies created later.
  await store.agencies.create({
    code: 'PPZ',
    name: 'PPZ',
    apiKey: '22222222-2222-4333-8444-555555555555',
    now: new Date('2026-11-20T02:00:00.000Z'),
  });
  assert.deepEqual((await store.agencies.get('PPZ'))?.settings.paymentCategories, []);
  const list = await store.agencies.list();
  list[0]?.settings.paymentCategories.push('list-is-a-copy');
  assert.deepEqual((await store.agencies.get('LZS'))?.settings.paymentCategories, ['fitrah']);
});
