/**
 * `amil migrate-store`: a used embedded store (the fixture day posted and ledgered, a checkout order, a
 * report token, a nightly run's workbooks) moved into PostgreSQL, every table's rows counted and
 * checksummed on both sides, every workbook's bytes against its run's SHA-256.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { fixedClock } from '../../core/clock.ts';
import { loadConfig } from '../../core/config.ts';
import { localWorkbook } from '../../core/recon-workbook.ts';
import { migratePg } from '../../core/store/pg/migrate.ts';
import { migrateStore } from '../../core/store/sqlite/migrate-store.ts';
import { openDatabase } from '../../core/store/sqlite/db.ts';
import { openPgPool } from '../../core/store/pg/pool.ts';
import type { ReconRunRow } from '../../core/store/index.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { reconNightlyJob } from '../../pipeline/jobs/recon.ts';
import { runCli, startServer } from '../bin/processes.ts';
import { REPO_ROOT, reportToken, startApp, tempDir } from '../helpers.ts';
import { migratePgBefore, startPostgres, type TestPostgres } from '../support/postgres.ts';
import { onPostgres } from '../support/test-database.ts';

const DAY_DIR = path.join(REPO_ROOT, 'fixtures/days/2026-11-20');

let server: TestPostgres;
before(async () => {
  server = await startPostgres();
});
after(() => server.stop());

/**
 * A SQLite store with the fixture day ledgered, a checkout order and a report token (and, with `nightly`,
 * the day's nightly run: a workbook per agency and the bank test report); its file.
 */
async function usedStore(
  t: Parameters<typeof startApp>[0],
  options: { nightly?: boolean } = {},
): Promise<string> {
  const clock = fixedClock('2026-11-20T23:59:50+08:00');
  const app = await startApp(t, {}, { clock });
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
  if (options.nightly) {
    clock.set('2026-11-21T00:30:00+08:00');
    await reconNightlyJob.process({ day: '2026-11-20' }, app.deps);
  }
  return loadConfig({ DATA_DIR: app.dataDir }).databaseFile;
}

/** Only on SQLite: the move's source is the app's SQLite file. */
const SQLITE_SOURCE = { skip: onPostgres && "SQLite only: its source is the app's SQLite file" };

/** `amil migrate-store --from sqlite:FILE --to URL`, with any further arguments. */
const moveStore = (file: string, url: string, ...more: string[]) =>
  runCli(['migrate-store', '--from', `sqlite:${file}`, '--to', url, ...more], {});

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
  SQLITE_SOURCE,
  async (t) => {
    const file = await usedStore(t);
    // Two callbacks of the order, as a merchant's endpoint left them: one retrying, one given up.
    const writing = new Database(file);
    writing.exec(`INSERT INTO callbacks (order_no, status, url, fields, created_at, state, attempts)
      VALUES ('ORD-1', 'pending', 'https://merchant.example.my/back', '{}', '2026-11-20T10:00:01.000Z', 'dead', 8),
             ('ORD-1', 'pending', 'https://merchant.example.my/back', '{}', '2026-11-20T10:00:02.000Z', 'queued', 1)`);
    writing.close();
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
    // The settled callbacks' counts: appended by PostgreSQL's triggers as they went in (decision 245; the
    // queued ones are counted live).
    const source = new Database(file, { readonly: true });
    const sqliteCounts = source
      .prepare<[], { agency_code: string; state: string; attempted: number; n: number }>(
        `SELECT agency_code, state, attempted, n FROM callback_counts WHERE n > 0 AND state <> 'queued'
         ORDER BY 1, 2, 3`,
      )
      .all()
      .map((r) => ({ ...r, attempted: r.attempted === 1 }));
    source.close();
    assert.ok(sqliteCounts.length > 0, 'the used store has callbacks');
    assert.deepEqual(
      await pg.rows(
        `SELECT agency_code, state, attempted, sum(n)::bigint AS n FROM callback_count_deltas
         GROUP BY 1, 2, 3 HAVING sum(n) <> 0 ORDER BY 1, 2, 3`,
      ),
      sqliteCounts,
    );
    const next = await pg.row<{ id: number }>(
      `INSERT INTO outbox (queue, job_id, payload, created_at) VALUES ('x', 'after-copy', '{}', now()) RETURNING id`,
    );
    assert.equal(next?.id, count(file, 'outbox') + 1);
  },
);

test(
  "a move stopped between PostgreSQL's commit and the mark is completed by running it again: compared, not copied, and the file marked",
  SQLITE_SOURCE,
  async (t) => {
    const file = await usedStore(t, { nightly: true });
    const url = await server.createTestDatabase();
    assert.equal((await moveStore(file, url)).code, 0);
    // What a move killed after PostgreSQL's commit leaves: the copy committed and the file not marked.
    assert.equal((await runCli(['migrate-store', '--reopen', '--from', `sqlite:${file}`], {})).code, 0);
    const pg = openPgPool(url);
    t.after(() => pg.close());
    const before = await pg.row<{ n: number }>('SELECT count(*)::int AS n FROM bank_postings');

    const again = await moveStore(file, url);
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stdout,
      /PostgreSQL already holds this store.*Nothing copied; \d+ rows in \d+ tables and [1-9]\d* workbooks/,
    );
    assert.match(again.stdout, /is marked moved: it refuses writes from now on/);
    assert.throws(() => openDatabase(file), /was moved to PostgreSQL/);
    assert.deepEqual(
      await pg.row('SELECT count(*)::int AS n FROM bank_postings'),
      before,
      'nothing copied twice',
    );
  },
);

test(
  'a move re-run after an earlier one left a workbook out: refused until it is allowed again, then the run is left out and the others compared',
  SQLITE_SOURCE,
  async (t) => {
    const file = await usedStore(t, { nightly: true });
    const [gone, ...kept] = runsOf(file);
    assert.ok(gone && kept.length > 0);
    const workbook = path.resolve(path.dirname(file), gone.file);
    const bytes = readFileSync(workbook);
    rmSync(workbook);
    const url = await server.createTestDatabase();
    assert.equal((await moveStore(file, url, '--allow-missing-workbooks')).code, 0);
    assert.equal((await runCli(['migrate-store', '--reopen', '--from', `sqlite:${file}`], {})).code, 0);
    // The file is back: PostgreSQL still holds no workbook for its run.
    writeFileSync(workbook, bytes);
    const refused = await moveStore(file, url);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      new RegExp(
        `PostgreSQL holds no workbook for run ${gone.id}: the earlier move left it out\\. .*--allow-missing-workbooks`,
      ),
    );
    openDatabase(file).close(); // not marked

    const finished = await moveStore(file, url, '--allow-missing-workbooks');
    assert.equal(finished.code, 0, finished.stderr);
    assert.match(finished.stdout, new RegExp(`and ${kept.length} workbooks`));
    assert.match(finished.stdout, new RegExp(`^workbook of run ${gone.id} +left out: `, 'm'));
    assert.throws(() => openDatabase(file), /was moved to PostgreSQL/);
  },
);

test(
  'migrate-store refuses a target that holds other data than the file, names what differs, and commits nothing',
  SQLITE_SOURCE,
  async (t) => {
    const file = await usedStore(t);
    const url = await server.createTestDatabase();
    assert.equal((await moveStore(file, url)).code, 0);
    assert.equal((await runCli(['migrate-store', '--reopen', '--from', `sqlite:${file}`], {})).code, 0);
    // The file written after the move was undone: PostgreSQL's copy is no longer this store.
    const db = new Database(file);
    db.prepare("UPDATE partners SET created_at = '2020-01-01T00:00:00.000Z'").run();
    db.close();
    const again = await moveStore(file, url);
    assert.equal(again.code, 1);
    assert.match(
      again.stderr,
      /amil: the target database is not empty \(table \w+ has rows\) and is not a copy of this file \(partners differ\); nothing was copied\. To move this file, name an empty database/,
    );
    openDatabase(file).close(); // not marked
  },
);

test(
  'migrate-store commits nothing when a table would read back different from SQLite',
  SQLITE_SOURCE,
  async (t) => {
    const file = await usedStore(t);
    // A time SQLite holds in another form than every amil write: PostgreSQL would store it as another string.
    const db = new Database(file);
    db.prepare("UPDATE partners SET created_at = '2026-11-20 10:00:00'").run();
    db.close();
    const url = await server.createTestDatabase();
    const result = await moveStore(file, url);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /reads back differently for partners: nothing was committed/);
    const pg = openPgPool(url);
    t.after(() => pg.close());
    assert.deepEqual(await pg.rows('SELECT id FROM partners'), []);
    assert.deepEqual(await pg.rows('SELECT id FROM bank_postings'), []);
  },
);

test(
  'migrate-store refuses a target of an older release that holds data before migrating it, leaving it as it was',
  SQLITE_SOURCE,
  async (t) => {
    const file = await usedStore(t);
    // Another installation's live database, on the release before migration 025, holding its own data.
    const url = await server.createTestDatabase();
    const pg = openPgPool(url);
    t.after(() => pg.close());
    const older = await migratePgBefore(pg, '025');
    await pg.run("INSERT INTO partners (id, created_at) VALUES ('other-bank', now())");

    const result = await moveStore(file, url);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /amil: the target database is not empty \(table partners has rows\) and has \d+ of this release's migrations to apply \(025_\w+\.sql\.\.\.\), so it is no earlier move of this file; nothing was copied or applied/,
    );
    const applied = await pg.rows<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
    assert.deepEqual(
      applied.map((r) => r.name),
      older,
      'no migration applied to the refused database',
    );
    assert.doesNotThrow(() => openDatabase(file).close(), 'the file is not marked moved');
  },
);

test('migrate-store refuses an integer beyond 2^53 in the file, naming where, and copies nothing', async (t) => {
  const file = path.join(tempDir(t), 'amil.db');
  openDatabase(file).close();
  const db = new Database(file);
  db.prepare("INSERT INTO partners (id, created_at) VALUES ('demo-bank', '2026-11-20T00:00:00.000Z')").run();
  // No amil write makes one; a file edited by hand can hold one (better-sqlite3 would read it rounded).
  db.prepare('UPDATE health_heartbeat SET beat = 9007199254740993').run();
  db.close();
  const url = await server.createTestDatabase();
  const result = await moveStore(file, url);
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    /^amil: health_heartbeat\.beat holds 9007199254740993, an integer beyond 2\^53 .*; nothing was copied\n$/,
  );
  const pg = openPgPool(url);
  t.after(() => pg.close());
  assert.deepEqual(await pg.rows('SELECT id FROM partners'), []);
  assert.doesNotThrow(() => openDatabase(file).close(), 'the file is not marked moved');
});

test('migrate-store from a file that does not exist says so', async (t) => {
  const url = await server.createTestDatabase();
  const missing = path.join(tempDir(t), 'no-such', 'amil.db');
  const result = await moveStore(missing, url);
  assert.equal(result.code, 1);
  assert.equal(result.stderr, `amil: ${missing} does not exist: name the SQLite file of the store to move\n`);
});

/** The reconciliation runs the SQLite store at `file` recorded, as the store reads them. */
function runsOf(file: string): Pick<ReconRunRow, 'id' | 'sink' | 'file' | 'fileSha256' | 'fileBytes'>[] {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare<[], Pick<ReconRunRow, 'id' | 'sink' | 'file' | 'fileSha256' | 'fileBytes'>>(
        `SELECT id, sink, file, file_sha256 AS fileSha256, file_bytes AS fileBytes FROM recon_runs ORDER BY id`,
      )
      .all();
  } finally {
    db.close();
  }
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

test(
  'after migrate-store every old run’s workbook is read from PostgreSQL, byte for byte, on a machine with an empty DATA_DIR',
  SQLITE_SOURCE,
  async (t) => {
    const file = await usedStore(t, { nightly: true });
    const runs = runsOf(file);
    assert.ok(runs.length >= 2, 'the nightly run wrote a workbook per sink');
    const url = await server.createTestDatabase();
    const result = await moveStore(file, url);
    assert.equal(result.code, 0, result.stderr);
    // Another machine: PostgreSQL only, a DATA_DIR of its own that has never held a workbook.
    const web = await startApp(t, { DATABASE_URL: url, LOG_LEVEL: 'warn' });
    assert.deepEqual(
      readdirSync(web.dataDir).filter((f) => f === 'reconciliation'),
      [],
    );
    const lzs = runs.find((r) => r.sink === 'LZS');
    assert.ok(lzs, 'an LZS run');
    const served = await fetch(`${web.url}/api/report/v1/reconciliation/${lzs.id}/workbook`, {
      headers: { authorization: `Bearer ${await reportToken(web, ['LZS'])}` },
    });
    assert.equal(served.status, 200, await served.clone().text());
    assert.equal(sha256(Buffer.from(await served.arrayBuffer())), lzs.fileSha256);
    for (const run of runs) {
      const copied = await localWorkbook(web.deps, run);
      assert.ok(copied, `run ${run.id}: its workbook is in PostgreSQL`);
      assert.equal(sha256(readFileSync(copied)), run.fileSha256, `run ${run.id}`);
    }
    // And the CLI said so, workbook by workbook, as it does table by table.
    for (const run of runs)
      assert.match(
        result.stdout,
        new RegExp(
          `^workbook of run ${run.id} +${run.fileBytes} bytes sha256 ${run.fileSha256.slice(0, 16)}  same$`,
          'm',
        ),
      );
    assert.match(result.stdout, new RegExp(`in \\d+ tables and ${runs.length} workbooks`));
  },
);

/** The store of a nightly run with one workbook deleted and another changed (same size): the two runs. */
async function storeWithBadWorkbooks(t: Parameters<typeof startApp>[0]) {
  const file = await usedStore(t, { nightly: true });
  const [gone, changed] = runsOf(file);
  assert.ok(gone && changed);
  const dataDir = path.dirname(file);
  rmSync(path.resolve(dataDir, gone.file));
  const bytes = readFileSync(path.resolve(dataDir, changed.file));
  bytes[bytes.length - 1] = bytes.at(-1)! ^ 0xff;
  writeFileSync(path.resolve(dataDir, changed.file), bytes);
  return { file, gone, changed };
}

test(
  'migrate-store refuses, naming the runs, when a workbook is missing or differs from its run’s SHA-256, and copies nothing',
  SQLITE_SOURCE,
  async (t) => {
    const { file, gone, changed } = await storeWithBadWorkbooks(t);
    const url = await server.createTestDatabase();
    const result = await moveStore(file, url);
    assert.equal(result.code, 1, result.stdout);
    assert.match(result.stderr, /^amil: the workbooks of 2 runs are not as they were recorded/);
    assert.ok(result.stderr.includes(`run ${gone.id} (${gone.sink} 2026-11-20): ${gone.file} is missing`));
    assert.ok(
      result.stderr.includes(
        `run ${changed.id} (${changed.sink} 2026-11-20): ${changed.file} does not match`,
      ),
    );
    assert.match(result.stderr, /--allow-missing-workbooks/);
    const pg = openPgPool(url);
    t.after(() => pg.close());
    assert.equal(await pg.row("SELECT 1 FROM pg_tables WHERE tablename = 'recon_runs'"), undefined);
  },
);

test(
  'with --allow-missing-workbooks the runs move without their missing or changed workbooks, which are then no longer kept',
  SQLITE_SOURCE,
  async (t) => {
    const { file, gone, changed } = await storeWithBadWorkbooks(t);
    const runs = runsOf(file);
    const url = await server.createTestDatabase();
    const result = await moveStore(file, url, '--allow-missing-workbooks');
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      new RegExp(`^workbook of run ${gone.id} +left out: ${gone.file} is missing$`, 'm'),
    );
    assert.match(
      result.stdout,
      new RegExp(`^workbook of run ${changed.id} +left out: ${changed.file} does not match`, 'm'),
    );
    assert.match(result.stdout, new RegExp(`and ${runs.length - 2} workbooks`));
    const web = await startApp(t, { DATABASE_URL: url, LOG_LEVEL: 'warn' });
    assert.deepEqual(
      (await web.deps.store.reconRuns.list({ limit: 100 })).map((r) => r.id).sort((a, b) => a - b),
      runs.map((r) => r.id),
      'every run moved',
    );
    for (const run of runs) {
      const copied = await localWorkbook(web.deps, run);
      if (run.id === gone.id || run.id === changed.id) assert.equal(copied, undefined, `run ${run.id}`);
      else assert.equal(sha256(readFileSync(copied!)), run.fileSha256, `run ${run.id}`);
    }
  },
);

test(
  'migrate-store commits nothing when a workbook would read back from PostgreSQL different from its run’s SHA-256',
  SQLITE_SOURCE,
  async (t) => {
    const file = await usedStore(t, { nightly: true });
    const url = await server.createTestDatabase();
    // A target that changes what it is given: PostgreSQL migrated ahead, with a trigger on recon_files.
    const pg = openPgPool(url);
    t.after(() => pg.close());
    await migratePg(pg);
    await pg.run(`CREATE FUNCTION spoil() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN NEW.bytes := NEW.bytes || '\\x00'::bytea; RETURN NEW; END $$`);
    await pg.run('CREATE TRIGGER spoil BEFORE INSERT ON recon_files FOR EACH ROW EXECUTE FUNCTION spoil()');
    const result = await moveStore(file, url);
    assert.equal(result.code, 1, result.stdout);
    assert.match(result.stderr, /PostgreSQL reads back differently for the workbooks of runs \d+/);
    assert.match(result.stderr, /nothing was committed/);
    assert.deepEqual(await pg.rows('SELECT id FROM recon_runs'), []);
    assert.deepEqual(await pg.rows('SELECT run_id FROM recon_files'), []);
  },
);

test(
  'migrate-store finds the workbooks under --data-dir when the SQLite file is no longer beside them',
  SQLITE_SOURCE,
  async (t) => {
    const file = await usedStore(t, { nightly: true });
    const moved = path.join(tempDir(t), 'amil.db');
    const source = new Database(file, { readonly: true });
    await source.backup(moved);
    source.close();
    const url = await server.createTestDatabase();
    const alone = await moveStore(moved, url);
    assert.equal(alone.code, 1, alone.stdout);
    assert.match(
      alone.stderr,
      new RegExp(`the workbooks of ${runsOf(file).length} runs are not as they were`),
    );
    const named = await moveStore(moved, url, '--data-dir', path.dirname(file));
    assert.equal(named.code, 0, named.stderr);
    assert.match(named.stdout, new RegExp(`and ${runsOf(file).length} workbooks`));
  },
);

test(
  'after migrate-store the SQLite file refuses every write and a process started on it refuses to start, until --reopen',
  SQLITE_SOURCE,
  async (t) => {
    const file = await usedStore(t);
    const url = await server.createTestDatabase();
    const moved = await moveStore(file, url);
    assert.equal(moved.code, 0, moved.stderr);
    assert.match(moved.stdout, /is marked moved: it refuses writes from now on/);
    const raw = new Database(file);
    t.after(() => raw.close());
    for (const write of [
      "UPDATE partners SET created_at = 'x'",
      'DELETE FROM bank_postings',
      "INSERT INTO outbox (queue, job_id, payload, created_at) VALUES ('x', 'after-move', '{}', 'now')",
      'DELETE FROM store_moved',
    ])
      assert.throws(
        () => raw.exec(write),
        /this store was moved to PostgreSQL \(postgres:\/\/.*\) at 20/,
        write,
      );
    assert.ok(count(file, 'bank_postings') > 0, 'reads still work');
    // The store's own opening, which a server, a worker and the CLI go through.
    assert.throws(
      () => openDatabase(file),
      /was moved to PostgreSQL .* by amil migrate-store\. Set DATABASE_URL to use it; .*--reopen/,
    );
    await assert.rejects(startServer({ DATA_DIR: path.dirname(file) }), (err: Error) => {
      assert.match(err.message, /server.ts exited with 1/);
      assert.match(err.message, /amil\.db: this store was moved to PostgreSQL .* Set DATABASE_URL/);
      assert.doesNotMatch(err.message, /\n\s+at /, 'one line, no stack trace');
      return true;
    });
    const cli = await runCli(['partner', 'list'], { DATA_DIR: path.dirname(file) });
    assert.equal(cli.code, 1, cli.stdout);
    assert.match(cli.stderr, /this store was moved to PostgreSQL/);
    // A second move from the marked file is a copy like the first (nothing can have changed it since).
    const again = await moveStore(file, await server.createTestDatabase());
    assert.equal(again.code, 0, again.stderr);

    const reopened = await runCli(['migrate-store', '--reopen', '--from', `sqlite:${file}`], {});
    assert.equal(reopened.code, 0, reopened.stderr);
    assert.match(reopened.stdout, /can be written again/);
    openDatabase(file).close();
    raw.exec('UPDATE partners SET created_at = created_at');
    const twice = await runCli(['migrate-store', '--reopen', '--from', `sqlite:${file}`], {});
    assert.match(twice.stdout, /was not marked moved: nothing to do/);
  },
);

test(
  'a server left running on the SQLite file answers its writes 503 once the file is moved: nothing it accepted is missing from PostgreSQL',
  SQLITE_SOURCE,
  async (t) => {
    const app = await startApp(t, { LOG_LEVEL: 'fatal' });
    const [first, second] = readdirSync(DAY_DIR)
      .filter((f) => /^\d\d-.*\.json$/.test(f))
      .sort();
    assert.equal((await app.postBatch(readFileSync(path.join(DAY_DIR, first!)))).status, 200);
    const file = loadConfig({ DATA_DIR: app.dataDir }).databaseFile;
    const accepted = count(file, 'bank_postings');
    const url = await server.createTestDatabase();
    const copy = await migrateStore(file, url);
    assert.equal(copy.sourceMarked, true);

    const late = await app.postBatch(readFileSync(path.join(DAY_DIR, second!)));
    assert.equal(late.status, 503, await late.text());
    assert.ok(late.headers.get('retry-after'), 'told when to send it again');
    // Its readiness probe fails too, so a load balancer stops sending it anything.
    assert.equal((await fetch(`${app.url}/health/ready`)).status, 503);
    assert.equal(count(file, 'bank_postings'), accepted, 'nothing stored in the old file');
    const pg = openPgPool(url);
    t.after(() => pg.close());
    const inPg = await pg.row<{ n: number }>('SELECT count(*)::int AS n FROM bank_postings');
    assert.equal(inPg?.n, accepted, 'every posting answered 200 is in PostgreSQL');
  },
);

test(
  'migrate-store refuses to copy while another process keeps writing the SQLite file, and copies nothing',
  SQLITE_SOURCE,
  async (t) => {
    const file = await usedStore(t);
    const writer = new Database(file);
    t.after(() => writer.close());
    writer.exec('BEGIN IMMEDIATE');
    const url = await server.createTestDatabase();
    await assert.rejects(
      migrateStore(file, url, { lockWaitMs: 200 }),
      /another process has been writing .* for 200 ms .*stop every process using the file.*nothing was copied/,
    );
    const pg = openPgPool(url);
    t.after(() => pg.close());
    assert.equal(await pg.row("SELECT 1 FROM pg_tables WHERE tablename = 'bank_postings'"), undefined);
    writer.exec('ROLLBACK');
    assert.equal((await migrateStore(file, url, { lockWaitMs: 200 })).sourceMarked, true);
  },
);
