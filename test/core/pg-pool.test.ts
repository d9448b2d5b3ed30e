/** The PostgreSQL connection (core/store/pg/pool.ts) on a real PostgreSQL 15 the test starts. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createDeps } from '../../core/bootstrap.ts';
import { ConfigError, loadConfig } from '../../core/config.ts';
import { openStore } from '../../core/store/index.ts';
import { isStoreOutage, LOCK_WAIT_MS } from '../../core/store/outage.ts';
import { openPgStore } from '../../core/store/pg/index.ts';
import { openPgPool, redactDatabaseUrl, statement, type PgDb } from '../../core/store/pg/pool.ts';
import { pgGroupCommitter } from '../../core/store/pg/group-commit.ts';
import { tempDir } from '../helpers.ts';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';
import { capturedLogger } from '../support/logs.ts';

let server: TestPostgres;
let db: PgDb;

before(async () => {
  server = await startPostgres();
  db = openPgPool(server.url);
});
after(async () => {
  await db.close();
  await server.stop();
});

test('DATABASE_URL selects PostgreSQL; unset keeps SQLite; a malformed one is refused without echoing it', () => {
  assert.equal(loadConfig({}).databaseUrl, undefined);
  const url = 'postgres://amil:s3cret-pw@db.example.my:5432/amil';
  assert.equal(loadConfig({ DATABASE_URL: url }).databaseUrl, url);
  assert.equal(loadConfig({ DATABASE_URL: 'postgresql://h/amil' }).databaseUrl, 'postgresql://h/amil');
  assert.throws(
    () => loadConfig({ DATABASE_URL: 'mysql://root:s3cret-pw@h/amil' }),
    (err: unknown) =>
      err instanceof ConfigError &&
      /DATABASE_URL must look like postgres:\/\//.test(err.message) &&
      !err.message.includes('s3cret-pw'),
  );
});

test('the database password never reaches a log line or the printed URL', () => {
  const { logger, lines } = capturedLogger('info');
  const url = 'postgres://amil:s3cret-pw@db.example.my:5432/amil';
  logger.info({ databaseUrl: url, store: { connectionString: url } }, 'store opened');
  assert.ok(!lines.join('').includes('s3cret-pw'), lines.join(''));
  assert.equal(redactDatabaseUrl(url), 'postgres://amil:***@db.example.my:5432/amil');
  assert.equal(redactDatabaseUrl('postgres://h/amil'), 'postgres://h/amil');
});

test('bigint sen reads back as an integer number, and one beyond 2^53 fails loudly instead of rounding', async () => {
  const row = await db.row<{ sen: number; big: number; total: number }>(
    'SELECT $1::bigint AS sen, $2::bigint AS big, sum(x) AS total FROM (VALUES ($1::bigint), ($2::bigint)) v (x)',
    [3_000_000, Number.MAX_SAFE_INTEGER - 3_000_000],
  );
  assert.deepEqual(row, {
    sen: 3_000_000,
    big: Number.MAX_SAFE_INTEGER - 3_000_000,
    total: Number.MAX_SAFE_INTEGER,
  });
  await assert.rejects(
    db.row("SELECT '9007199254740993'::bigint AS sen"),
    /9007199254740993 from PostgreSQL is beyond Number.MAX_SAFE_INTEGER/,
  );
  await assert.rejects(
    db.row('SELECT sum(x) FROM (VALUES (9007199254740991::bigint), (2::bigint)) v (x)'),
    /beyond/,
  );
});

test('an instant reads back as the ISO string SQLite stores, whatever the server time zone', async () => {
  const name = (await db.row<{ name: string }>('SELECT current_database() AS name'))?.name ?? '';
  await db.run(`ALTER DATABASE ${name} SET timezone TO 'Asia/Kuala_Lumpur'`);
  const fresh = openPgPool(server.url);
  try {
    const at = '2026-11-20T16:00:00.123Z';
    const row = await fresh.row<{ at: string; day: string; kl: string }>(
      "SELECT $1::timestamptz AS at, '2026-11-21'::date AS day, to_char($1::timestamptz, 'HH24') AS kl",
      [at],
    );
    // The pool's sessions are UTC: SQL that formats an instant means the same on every server.
    assert.deepEqual(row, { at, day: '2026-11-21', kl: '16' });
  } finally {
    await fresh.close();
    await db.run(`ALTER DATABASE ${name} RESET timezone`);
  }
});

test('instants read back exactly, each row its own, when rows repeat an instant or alternate between a few', async () => {
  // The parser keeps its last answer (a batch's rows share an instant): a stale one must never leak.
  const instant = fc
    .integer({ min: Date.parse('1990-01-01T00:00:00Z'), max: Date.parse('2090-01-01T00:00:00Z') })
    .map((ms) => new Date(ms).toISOString());
  await fc.assert(
    fc.asyncProperty(
      fc.array(instant, { minLength: 1, maxLength: 4 }),
      fc.array(fc.nat(), { minLength: 1, maxLength: 40 }),
      async (few, picks) => {
        const sent = picks.map((p) => few[p % few.length]!);
        const rows = await db.rows<{ at: string; again: string }>(
          'SELECT at, at AS again FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(at, n) ORDER BY n',
          [sent],
        );
        assert.deepEqual(
          rows.map((r) => [r.at, r.again]),
          sent.map((at) => [at, at]),
        );
      },
    ),
    { numRuns: 60 },
  );
});

test('a named statement is prepared once per connection and runs with new values', async () => {
  const square = statement('SELECT $1::int * $1::int AS n');
  assert.equal(square.name, statement('SELECT $1::int * $1::int AS n').name);
  assert.notEqual(square.name, statement('SELECT $1::int + $1::int AS n').name);
  const results = await Promise.all([3, 4, 5, 6].map((n) => db.row<{ n: number }>(square, [n])));
  assert.deepEqual(
    results.map((r) => r?.n),
    [9, 16, 25, 36],
  );
  const prepared = await db.transaction((tx) =>
    tx.rows<{ name: string }>('SELECT name FROM pg_prepared_statements WHERE name = $1', [square.name]),
  );
  assert.ok(prepared.length <= 1);
});

test('a transaction commits all or nothing', async () => {
  await db.run('CREATE TABLE tx_items (id int PRIMARY KEY)');
  await assert.rejects(
    db.transaction(async (tx) => {
      await tx.run('INSERT INTO tx_items VALUES (1)');
      await tx.run('INSERT INTO tx_items VALUES (1)');
    }),
    /duplicate key/,
  );
  assert.deepEqual(await db.rows('SELECT id FROM tx_items'), []);
  await db.transaction(async (tx) => {
    await tx.run('INSERT INTO tx_items VALUES (1)');
    await tx.run('INSERT INTO tx_items VALUES (2)');
  });
  assert.deepEqual(await db.rows('SELECT id FROM tx_items ORDER BY id'), [{ id: 1 }, { id: 2 }]);
});

test('serializable transactions that collide are run again until both commit, each counted once', async () => {
  await db.run('CREATE TABLE tx_counter (id int PRIMARY KEY, n int NOT NULL)');
  await db.run('INSERT INTO tx_counter VALUES (1, 0)');
  let runs = 0;
  // Each reads, waits for the other to read, then writes: without a retry one of them fails with 40001.
  let arrived = 0;
  let release: () => void = () => undefined;
  const bothRead = new Promise<void>((resolve) => (release = resolve));
  const increment = () =>
    db.transaction(
      async (tx) => {
        runs += 1;
        const row = await tx.row<{ n: number }>('SELECT n FROM tx_counter WHERE id = 1');
        arrived += 1;
        if (arrived === 2) release();
        await Promise.race([bothRead, new Promise((r) => setTimeout(r, 500))]);
        await tx.run('UPDATE tx_counter SET n = $1 WHERE id = 1', [(row?.n ?? 0) + 1]);
      },
      { isolation: 'serializable' },
    );
  await Promise.all([increment(), increment()]);
  assert.deepEqual(await db.row('SELECT n FROM tx_counter WHERE id = 1'), { n: 2 });
  assert.ok(runs >= 3, `one transaction ran again (runs: ${runs})`);
});

test('a cursor streams a large result in pieces', async () => {
  const pieces = await db.transaction(async (tx) => {
    const sizes: number[] = [];
    let total = 0;
    for await (const rows of tx.cursor<{ n: number; at: string }>(
      "SELECT n::bigint AS n, timestamptz '2026-11-20T00:00:00Z' + n * interval '1 ms' AS at FROM generate_series(1, $1) n",
      [2500],
      1000,
    )) {
      sizes.push(rows.length);
      for (const row of rows) total += row.n;
      assert.equal(typeof rows[0]?.at, 'string');
    }
    return { sizes, total };
  });
  assert.deepEqual(pieces, { sizes: [1000, 1000, 500], total: (2500 * 2501) / 2 });
});

test('a process given DATABASE_URL runs on PostgreSQL and never writes a SQLite file', async (t) => {
  const dataDir = path.join(tempDir(t), 'never-made');
  const deps = createDeps({
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    DATABASE_URL: await server.createTestDatabase(),
  });
  try {
    await deps.store.partners.addPassword({
      partnerId: 'bank-a',
      label: 'first',
      hash: 'scrypt$not-a-real-hash',
      now: new Date('2026-01-01T00:00:00Z'),
    });
    assert.deepEqual(
      (await deps.store.partners.list()).map((p) => p.id),
      ['bank-a'],
    );
    assert.equal(existsSync(dataDir), false);
  } finally {
    await deps.store.close();
  }
});

test('the PostgreSQL store migrates as it opens and has every repository the SQLite store has', async (t) => {
  const store = openPgStore(await server.createTestDatabase());
  const sqlite = openStore(path.join(tempDir(t), 'amil.db'));
  try {
    await store.ping();
    // The SQLite store also names its file; every other member, each repository, PostgreSQL has too.
    assert.deepEqual(
      Object.keys(store).sort(),
      Object.keys(sqlite)
        .filter((key) => key !== 'file')
        .sort(),
    );
    assert.equal(await store.orders.order('ORD-1'), undefined);
    assert.equal(await store.dashboardUsers.byEmail('nobody@example.my'), undefined);
    assert.deepEqual(await store.dashboardReads.runs('NOBODY', { limit: 5 }), []);
  } finally {
    await sqlite.close();
    await store.close();
  }
});

test('a stream of the PostgreSQL store stays a stream: read at once after opening, it waits for the migrations', async () => {
  const store = openPgStore(await server.createTestDatabase());
  try {
    const rows = [];
    for await (const row of store.dashboardReads.paymentRows({
      agency: 'LZS',
      firstDay: '2026-11-01',
      lastDay: '2026-11-30',
    }))
      rows.push(row);
    assert.deepEqual(rows, []);
  } finally {
    await store.close();
  }
});

// What COPY's text format reads specially (backslash sequences, `\\N`, the end marker `\\.`), and what the
// store's own encoding touches (NUL, U+E000).
const copyTricky = fc
  .array(
    fc.oneof(
      fc.constantFrom('\\', '\t', '\n', '\r', '\\N', '\\.', '\u0000', '\uE000', '0', 'N', '.'),
      fc.string({ maxLength: 3 }),
    ),
  )
  .map((parts) => parts.join(''));

test('rows copied in (COPY FROM STDIN) read back exactly as written: any text, NULL, and integers', async () => {
  await db.run('CREATE TABLE copy_probe (t text, i integer NOT NULL, n bigint)');
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.option(fc.oneof(copyTricky, fc.string({ unit: 'binary' })), { nil: null }),
            fc.option(fc.maxSafeInteger(), { nil: null }),
          ),
          { maxLength: 8 },
        ),
        async (values) => {
          // The text first, so that what COPY reads specially can start a line.
          const rows = values.map(([t, n], i) => [t, i, n]);
          const copied = await db.transaction(async (tx) => {
            await tx.run('DELETE FROM copy_probe');
            const count = await tx.copyRows('copy_probe', ['t', 'i', 'n'], rows);
            return {
              count,
              back: await tx.rows<{ i: number; t: string | null; n: number | null }>(
                'SELECT i, t, n FROM copy_probe ORDER BY i',
              ),
            };
          });
          assert.equal(copied.count, rows.length);
          assert.deepEqual(
            copied.back.map((r) => [r.t, r.i, r.n]),
            rows,
          );
        },
      ),
      { numRuns: 200 },
    );
    // On the pool (no transaction) the copy commits on its own; a row breaking a constraint copies nothing.
    assert.equal(await db.copyRows('copy_probe', ['i', 't'], [[100, 'kept']]), 1);
    await assert.rejects(
      db.copyRows(
        'copy_probe',
        ['i', 't'],
        [
          [101, 'x'],
          [null, 'no i'],
        ],
      ),
      /not-null/,
    );
    assert.deepEqual(await db.rows('SELECT t FROM copy_probe WHERE i >= 100'), [{ t: 'kept' }]);

    // A value COPY cannot carry is refused before the copy starts: the transaction still rolls back, and
    // the connection, on the pool or in a transaction, goes back usable (within 5 s: never left waiting).
    const settled = <T>(work: Promise<T>) =>
      Promise.race([
        work,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('still waiting after 5 s')), 5000).unref(),
        ),
      ]);
    for (let round = 0; round < 12; round += 1) {
      await assert.rejects(
        settled(
          db.transaction(async (tx) => {
            await tx.run("INSERT INTO copy_probe (t, i) VALUES ('rolled back', 200)");
            await tx.copyRows('copy_probe', ['t', 'i'], [['x', Number.NaN]]);
          }),
        ),
        /not finite/,
      );
      await assert.rejects(settled(db.copyRows('copy_probe', ['t', 'i'], [[{ an: 'object' }, 1]])), /object/);
    }
    assert.deepEqual(await settled(db.rows('SELECT t FROM copy_probe WHERE i >= 100 ORDER BY i')), [
      { t: 'kept' },
    ]);
  } finally {
    await db.run('DROP TABLE copy_probe');
  }
});

test(
  'a session the server ends mid-query fails that query only: in a transaction, a cursor or a copy, the process lives on',
  // A stream that waited for ever on its lost session was one way to fail this: it must fail, not hang.
  { timeout: 30_000 },
  async () => {
    // node-postgres reports a lost session as an 'error' event on its connection too; unheard while the
    // connection is out of the pool, that event would end this process (the test run would fail on it).
    await db.run('CREATE TABLE lost_probe (i integer)');
    const holder = openPgPool(server.url, { max: 1 });
    try {
      const ends = [
        () => db.transaction((tx) => tx.run('INSERT INTO lost_probe VALUES (1)')),
        () =>
          db.transaction(async (tx) => {
            for await (const rows of tx.cursor('SELECT * FROM lost_probe', [], 10)) void rows;
          }),
        () => db.copyRows('lost_probe', ['i'], [[2]]),
      ];
      for (const [n, start] of ends.entries()) {
        // Each waits on the table's lock until its session is ended, as an operator or a failover would.
        const failed = await holder.transaction(async (tx) => {
          await tx.run('LOCK TABLE lost_probe IN ACCESS EXCLUSIVE MODE');
          // At once after the failure, before the lost session's end can be noticed, the pool must not hand
          // that connection out again (it would hand out the one given back last).
          const outcome = start().then(
            () => 'finished',
            async (err: Error) => {
              const next = await db.rows('SELECT 1').then(
                () => 'usable',
                (e: Error) => e.message,
              );
              return `${err.message}; the next query: ${next}`;
            },
          );
          for (let waited = 0; ; waited += 20) {
            const ended = await tx.row<{ n: number }>(
              `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_locks
             WHERE relation = 'lost_probe'::regclass AND NOT granted`,
            );
            if (ended?.n === 1) break;
            assert.ok(waited < 10_000, `operation ${n} never waited on the lock`);
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          return outcome;
        });
        assert.match(failed, /^terminating connection.*; the next query: usable$/, `operation ${n}`);
      }
      // The pool hands out working connections after the lost ones.
      await db.transaction((tx) => tx.run('INSERT INTO lost_probe VALUES (3)'));
      assert.deepEqual(await db.rows('SELECT i FROM lost_probe'), [{ i: 3 }]);
    } finally {
      await holder.close();
      await db.run('DROP TABLE lost_probe');
    }
  },
);

test(
  'statements in flight when the server crashes fail as an outage (a 503 to retry, not a 500), and the pool serves again once it is back',
  { timeout: 60_000 },
  async (t) => {
    const crashing = await startPostgres(t);
    const fresh = openPgPool(crashing.url);
    try {
      await fresh.rows('SELECT 1');
      const sleeping = `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'`;
      const inFlight = [
        failure(fresh.rows('SELECT pg_sleep(30)')),
        failure(fresh.transaction((tx) => tx.run('SELECT pg_sleep(30)'))),
      ];
      for (let waited = 0; (await fresh.row<{ n: number }>(sleeping))?.n !== 2; waited += 20) {
        assert.ok(waited < 10_000, 'the statements never started');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // An immediate shutdown warns each session (a WARNING, not an ERROR) and closes it: the driver's error
      // carries no code of its own.
      await crashing.crash();
      for (const { err } of await Promise.all(inFlight)) {
        assert.ok(isStoreOutage(err), `an outage, not ${String(err)}`);
        assert.match(String(err), /connection to PostgreSQL was lost/);
      }
      await crashing.restart();
      assert.deepEqual(await fresh.rows('SELECT 1 AS x'), [{ x: 1 }], 'the pool serves again');
      assert.equal(await fresh.transaction((tx) => tx.run('SELECT 1')), 1);
    } finally {
      await fresh.close();
    }
  },
);

/** What a promise rejected with (undefined when it resolved), and after how many milliseconds. */
async function failure(work: Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const started = Date.now();
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { err, ms: Date.now() - started };
}

/**
 * Runs `work` while another session holds table `name` (made for it, dropped after) in ACCESS EXCLUSIVE
 * mode: what `work` returned, and the rows the table held once the lock was released.
 */
async function whileLocked<T>(name: string, work: () => Promise<T>): Promise<{ result: T; rows: unknown[] }> {
  await db.run(`CREATE TABLE ${name} (i integer)`);
  const holder = openPgPool(server.url, { max: 1 });
  try {
    const result = await holder.transaction(async (tx) => {
      await tx.run(`LOCK TABLE ${name} IN ACCESS EXCLUSIVE MODE`);
      return work();
    });
    return { result, rows: await db.rows(`SELECT i FROM ${name}`) };
  } finally {
    await holder.close();
    await db.run(`DROP TABLE ${name}`);
  }
}

test(
  "a write waiting on a lock another session holds gives up after the lock wait, as a busy store (SQLite's busy timeout)",
  // Without a bound the statement would wait for ever: the bound is what is tested.
  { timeout: 30_000 },
  async () => {
    const { result, rows } = await whileLocked('wait_probe', () =>
      failure(db.run('INSERT INTO wait_probe VALUES (1)')),
    );
    const { err, ms } = result;
    assert.equal((err as { code?: string } | undefined)?.code, '55P03', String(err));
    assert.ok(isStoreOutage(err), 'answered 503 with Retry-After, not 500');
    assert.ok(ms >= LOCK_WAIT_MS - 100 && ms < LOCK_WAIT_MS + 3000, `gave up after ${ms} ms`);
    assert.deepEqual(rows, [], 'nothing written');
  },
);

test(
  'writes sharing a commit that meet the lock wait fail together after one wait, not each again after a wait of its own',
  { timeout: 60_000 },
  async () => {
    const inGroup = pgGroupCommitter(db);
    // Asked for in one turn: one group, one transaction.
    const { result: outcomes, rows } = await whileLocked('group_probe', () =>
      Promise.all(
        [1, 2, 3].map((i) => failure(inGroup((w) => w.run('INSERT INTO group_probe VALUES ($1)', [i])))),
      ),
    );
    for (const { err, ms } of outcomes) {
      assert.equal((err as { code?: string } | undefined)?.code, '55P03', String(err));
      assert.ok(ms < 2 * LOCK_WAIT_MS, `failed after ${ms} ms: one lock wait, not two`);
    }
    assert.deepEqual(rows, [], 'nothing written');
  },
);

test(
  'a statement asked for while every connection is out waits at most the connect timeout, then fails as an outage',
  // Without a bound the statement would wait for ever: the bound is what is tested.
  { timeout: 30_000 },
  async () => {
    const small = openPgPool(server.url, { max: 1, connectTimeoutMs: 300 });
    let finish = () => {};
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const busy = small.transaction(async (tx) => {
      await tx.run('SELECT 1');
      holding();
      await new Promise<void>((resolve) => (finish = resolve));
    });
    try {
      await held;
      const { err, ms } = await failure(small.rows('SELECT 1'));
      assert.ok(isStoreOutage(err), `an outage, not ${String(err)}`);
      assert.ok(ms >= 250 && ms < 3000, `gave up after ${ms} ms`);
      finish();
      await busy;
      assert.deepEqual(await small.rows('SELECT 1 AS x'), [{ x: 1 }], 'the pool serves again');
    } finally {
      finish();
      await busy;
      await small.close();
    }
  },
);

test(
  'a server that takes connections and never answers them fails each statement within the connect timeout, as an outage, and serves again once it resumes',
  // Without a bound the statement would wait for ever: the bound is what is tested.
  { timeout: 30_000 },
  async () => {
    const fresh = openPgPool(server.url, { connectTimeoutMs: 500 });
    try {
      // The postmaster stopped: the kernel still completes each TCP handshake, nobody answers the login.
      process.kill(server.pid, 'SIGSTOP');
      let outcomes: { err: unknown; ms: number }[];
      try {
        outcomes = [
          await failure(fresh.rows('SELECT 1')),
          await failure(fresh.transaction((tx) => tx.run('SELECT 1'))),
        ];
      } finally {
        process.kill(server.pid, 'SIGCONT');
      }
      for (const { err, ms } of outcomes) {
        assert.ok(isStoreOutage(err), `an outage, not ${String(err)}`);
        assert.ok(ms >= 400 && ms < 5000, `gave up after ${ms} ms`);
      }
      assert.deepEqual(await fresh.rows('SELECT 1 AS x'), [{ x: 1 }], 'the pool serves again');
    } finally {
      await fresh.close();
    }
  },
);
