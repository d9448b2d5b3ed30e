// Migration 009 rebuilds the payments table (the merchant's refNo unique among checkout orders only): an
// installation upgraded with payments, events, callbacks and day counts in it keeps every row and link.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openStore } from '../../core/store/index.ts';
import { REPO_ROOT, tempDir } from '../helpers.ts';

const MIGRATIONS = path.join(REPO_ROOT, 'core/store/sqlite/migrations');

test('an installation at migration 008 upgrades with every payment, event, callback and count kept', (t) => {
  const file = path.join(tempDir(t), 'amil.db');
  const old = new Database(file);
  old.pragma('journal_mode = WAL');
  old.pragma('foreign_keys = ON');
  old.exec('CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL) STRICT');
  for (const name of readdirSync(MIGRATIONS)
    .filter((f) => f < '009')
    .sort()) {
    old.exec(readFileSync(path.join(MIGRATIONS, name), 'utf8'));
    old.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(name, '2026-11-01T00:00:00Z');
  }
  old.prepare(`INSERT INTO agencies (code, name, created_at) VALUES ('LZS', 'LZS', '2026-11-01')`).run();
  const insert = old.prepare(
    `INSERT INTO payments (order_no, agency_code, ref_no, amount_sen, email, return_url, status, created_at, updated_at)
     VALUES (?, 'LZS', ?, 1000, 'a@example.my', ?, ?, '2026-11-20T02:00:00Z', '2026-11-20T02:00:00Z')`,
  );
  insert.run('AM1', 'INV-1', 'https://shop.example.my/r', 'success');
  insert.run('AM2', 'QR-1', '', 'pending');
  old
    .prepare(
      `INSERT INTO payment_events (order_no, at, status, source) VALUES ('AM1', '2026-11-20T02:00:00Z', 'success', 'x')`,
    )
    .run();
  old
    .prepare(
      `INSERT INTO callbacks (order_no, status, url, fields, created_at) VALUES ('AM1', 'success', 'https://shop.example.my/r', '{}', '2026-11-20T02:00:01Z')`,
    )
    .run();
  // The columns the counts had at 008 (026 adds the method: decision 243).
  const COUNTS = 'SELECT agency_code, day, approved, n FROM payment_day_counts ORDER BY approved';
  const counts = () => old.prepare(COUNTS).all();
  const before = counts();
  old.close();

  const store = openStore(file);
  t.after(() => store.close());
  const db = new Database(file, { readonly: true });
  t.after(() => db.close());
  assert.deepEqual(
    db.prepare('SELECT order_no, source, pay_link_uses FROM payments ORDER BY order_no').all(),
    [
      { order_no: 'AM1', source: 'checkout', pay_link_uses: null },
      { order_no: 'AM2', source: 'pay-link', pay_link_uses: 'once' },
    ],
  );
  assert.deepEqual(db.prepare(COUNTS).all(), before);
  assert.equal((db.prepare('SELECT count(*) AS n FROM callbacks').get() as { n: number }).n, 1);
  assert.deepEqual(db.pragma('foreign_key_check'), []);
  // The triggers came back: a new payment is counted.
  const rw = new Database(file);
  t.after(() => rw.close());
  rw.prepare(
    `INSERT INTO payments (order_no, agency_code, ref_no, amount_sen, email, return_url, status, created_at, updated_at, source)
     VALUES ('AM3', 'LZS', 'QR-1', 1000, 'b@example.my', '', 'pending', '2026-11-20T03:00:00Z', '2026-11-20T03:00:00Z', 'pay-link')`,
  ).run();
  const n = rw.prepare(`SELECT sum(n) AS n FROM payment_day_counts WHERE agency_code = 'LZS'`).get() as {
    n: number;
  };
  assert.equal(n.n, 3);
  // The merchant's refNo is still unique among checkout orders.
  assert.throws(
    () =>
      rw
        .prepare(
          `INSERT INTO payments (order_no, agency_code, ref_no, amount_sen, email, return_url, status, created_at, updated_at)
         VALUES ('AM4', 'LZS', 'INV-1', 1000, 'c@example.my', 'https://x', 'pending', '2026-11-20T03:00:00Z', '2026-11-20T03:00:00Z')`,
        )
        .run(),
    /UNIQUE/,
  );
});
