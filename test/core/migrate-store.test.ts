/**
 * `amil migrate-store`: a used embedded store (the fixture day posted and ledgered, a checkout order, a
 * report token) moved into PostgreSQL, every table's rows counted and checksummed on both sides.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { fixedClock } from '../../core/clock.ts';
import { loadConfig } from '../../core/config.ts';
import { openPgPool } from '../../core/store/pg/pool.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { runCli } from '../bin/processes.ts';
import { REPO_ROOT, reportToken, startApp } from '../helpers.ts';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';
import { onPostgres } from '../support/test-database.ts';

const DAY_DIR = path.join(REPO_ROOT, 'fixtures/days/2026-11-20');

let server: TestPostgres;
before(async () => {
  server = await startPostgres();
});
after(() => server.stop());

/** A SQLite store with the fixture day ledgered, a checkout order and a report token; its file. */
async function usedStore(t: Parameters<typeof startApp>[0]): Promise<string> {
  const app = await startApp(t, {}, { clock: fixedClock('2026-11-20T23:59:50+08:00') });
  for (const file of readdirSync(DAY_DIR)
    .filter((f) => /^\d\d-.*\.json$/.test(f))
    .sort()) {
    assert.equal((await app.postBatch(readFileSync(path.join(DAY_DIR, file)))).status, 200);
  }
  await createInProcessRuntime(app.deps, { pollMs: 20, maxAttempts: 3, backoffMs: 0 }).drain();
  await app.deps.store.orders.createOrder({
    orderNo: 'ORD-1',
    agencyCode: 'LZS',
    refNo: 'REF-1',
    extraData: null,
    paymentCategory: null,
    amountSen: 5000,
    email: 'payer@example.my',
    returnUrl: 'https://merchant.example.my/back',
    formToken: 'ft',
    at: '2026-11-20T10:00:00.000Z',
  });
  await reportToken(app, ['LZS']);
  await app.deps.store.ops.heartbeat(new Date('2026-11-20T12:00:00.000Z'));
  return loadConfig({ DATA_DIR: app.dataDir }).databaseFile;
}

function count(file: string, table: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

test(
  'migrate-store copies every table of a used SQLite store into PostgreSQL and proves it by counts and checksums',
  { skip: onPostgres && "SQLite only: its source is the app's SQLite file" },
  async (t) => {
    const file = await usedStore(t);
    const url = await server.createTestDatabase();
    const result = await runCli(['migrate-store', '--from', `sqlite:${file}`, '--to', url], {
      NODE_ENV: 'test',
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /counts and checksums match/);
    for (const table of [
      'bank_postings',
      'ledger_entries',
      'normalised_postings',
      'webhook_batches',
      'payments',
    ]) {
      const line = result.stdout.split('\n').find((l) => l.startsWith(`${table} `));
      assert.match(line ?? '', new RegExp(` ${count(file, table)} rows  sha256 [0-9a-f]{16}  same$`), table);
    }
    assert.ok(count(file, 'ledger_entries') > 20);
    const pg = openPgPool(url);
    t.after(() => pg.close());
    const posting = await pg.row<{ id: number; createdAt: string }>(
      'SELECT id, created_at AS "createdAt" FROM bank_postings ORDER BY id LIMIT 1',
    );
    assert.equal(posting?.id, 1);
    assert.match(posting?.createdAt ?? '', /^2026-11-20T\d\d:\d\d:\d\d\.\d{3}Z$/);
    // The day counts are the source's, and new rows continue after the ids copied.
    assert.deepEqual(await pg.rows('SELECT agency_code, day, approved, n FROM payment_day_counts'), [
      { agency_code: 'LZS', day: '2026-11-20', approved: 0, n: 1 },
    ]);
    const next = await pg.row<{ id: number }>(
      `INSERT INTO outbox (queue, job_id, payload, created_at) VALUES ('x', 'after-copy', '{}', now()) RETURNING id`,
    );
    assert.equal(next?.id, count(file, 'outbox') + 1);
  },
);

test(
  'migrate-store refuses a target that holds data, and commits nothing',
  { skip: onPostgres && "SQLite only: its source is the app's SQLite file" },
  async (t) => {
    const file = await usedStore(t);
    const url = await server.createTestDatabase();
    assert.equal((await runCli(['migrate-store', '--from', `sqlite:${file}`, '--to', url], {})).code, 0);
    const again = await runCli(['migrate-store', '--from', `sqlite:${file}`, '--to', url], {});
    assert.equal(again.code, 1);
    assert.match(again.stderr, /amil: the target database is not empty/);
  },
);

test(
  'migrate-store commits nothing when a table would read back different from SQLite',
  { skip: onPostgres && "SQLite only: its source is the app's SQLite file" },
  async (t) => {
    const file = await usedStore(t);
    // A time SQLite holds in another form than every amil write: PostgreSQL would store it as another string.
    const db = new Database(file);
    db.prepare("UPDATE partners SET created_at = '2026-11-20 10:00:00'").run();
    db.close();
    const url = await server.createTestDatabase();
    const result = await runCli(['migrate-store', '--from', `sqlite:${file}`, '--to', url], {});
    assert.equal(result.code, 1);
    assert.match(result.stderr, /reads back differently for partners: nothing was committed/);
    const pg = openPgPool(url);
    t.after(() => pg.close());
    assert.deepEqual(await pg.rows('SELECT id FROM partners'), []);
    assert.deepEqual(await pg.rows('SELECT id FROM bank_postings'), []);
  },
);
