/**
 * One generated business day, posted through the real app on SQLite and copied row for row into
 * PostgreSQL (by migrate-store): every read of the day gives the same answer on both engines, and the reconciliation
 * workbooks are the same bytes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { TEST_SINK, type SqliteStore, type Store } from '../../core/store/index.ts';
import { writeReconWorkbook } from '../../reports/reconciliation/workbook.ts';
import { EXCEPTION_CODES } from '../../pipeline/normalise/rules.ts';
import { tempDir } from '../helpers.ts';
import { AS_OF, DAY, PREV, generateDay } from '../support/recon-day.ts';
import { loadDay } from '../support/recon-load.ts';
import { migrateStore } from '../../core/store/sqlite/migrate-store.ts';
import { openTestPg, pgHalf, testPgUrl, type PgHalf } from '../support/pg-stores.ts';
import { SQLITE_APP } from '../support/test-database.ts';

async function workbook(store: Pick<Store, 'reconSnapshot'>, sink: string, file: string): Promise<Buffer> {
  const snapshot = await store.reconSnapshot.open(sink, DAY, AS_OF);
  try {
    await writeReconWorkbook({ snapshot, title: `Workbook of ${sink}`, explanations: EXCEPTION_CODES, file });
  } finally {
    await snapshot.close();
  }
  return readFileSync(file);
}

async function collect<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const row of rows) out.push(row);
  return out;
}

test('a day copied from SQLite into PostgreSQL reads the same on both engines', async (t) => {
  const generated = generateDay(300);
  // The source is SQLite in either run (npm run test:pg too): the move is from an embedded installation.
  const app = await loadDay(t, generated, SQLITE_APP);
  const sqlite = app.deps.store as SqliteStore;
  // Copied as `amil migrate-store` moves an installation: every row and id as it is.
  const url = await testPgUrl();
  await migrateStore(sqlite.file, url);
  const db = await openTestPg(t, url);
  const pg: PgHalf = pgHalf(db);
  const dir = tempDir(t);
  const sinks = [...(await sqlite.agencies.list()).map((a) => a.code), TEST_SINK];

  await t.test("each sink's workbook is byte-identical to the SQLite one", async () => {
    for (const sink of sinks) {
      const expected = await workbook(sqlite, sink, path.join(dir, `${sink}-sqlite.xlsx`));
      const actual = await workbook(pg, sink, path.join(dir, `${sink}-pg.xlsx`));
      assert.ok(expected.length > 4000, `${sink}: a workbook with content`);
      assert.ok(actual.equals(expected), `${sink}: the PostgreSQL workbook differs from SQLite's`);
    }
  });

  await t.test('every section of the snapshot holds the same rows in the same order', async () => {
    for (const sink of sinks) {
      const [a, b] = await Promise.all([
        sqlite.reconSnapshot.open(sink, DAY, AS_OF),
        pg.reconSnapshot.open(sink, DAY, AS_OF),
      ]);
      try {
        assert.deepEqual(await b.readiness(), await a.readiness());
        assert.deepEqual(await collect(b.transactions()), await collect(a.transactions()));
        assert.deepEqual(
          await collect(b.transactions({ flaggedOnly: true })),
          await collect(a.transactions({ flaggedOnly: true })),
        );
        assert.deepEqual(await collect(b.pending('opening')), await collect(a.pending('opening')));
        assert.deepEqual(await collect(b.pending('closing')), await collect(a.pending('closing')));
        assert.deepEqual(await collect(b.movements()), await collect(a.movements()));
        assert.deepEqual(
          await collect(b.movements({ adjustmentsOnly: true })),
          await collect(a.movements({ adjustmentsOnly: true })),
        );
        assert.deepEqual(await collect(b.versions()), await collect(a.versions()));
        assert.deepEqual(await b.anomalies(), await a.anomalies());
        assert.ok((await collect(a.transactions())).length > 0 || sink !== 'LZS', 'LZS has transactions');
      } finally {
        await a.close();
        await b.close();
      }
    }
  });

  await t.test(
    'a snapshot streams from one transaction held until it is closed; a section stopped early leaves the rest readable',
    async () => {
      const idleInTransaction = async () =>
        Number(
          (
            await db.row<{ n: number }>(
              `SELECT count(*) AS n FROM pg_stat_activity
               WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
            )
          )?.n,
        );
      const expected = await sqlite.reconSnapshot.open('LZS', DAY, AS_OF);
      const snapshot = await pg.reconSnapshot.open('LZS', DAY, AS_OF);
      try {
        assert.equal(await idleInTransaction(), 1, 'its one transaction, open between reads');
        for await (const item of snapshot.transactions()) {
          assert.ok(item.orderNo);
          break;
        }
        // Two sections read at once (a merge reads bank and checkout rows together), then each whole.
        const [moves, versions] = [snapshot.movements(), snapshot.versions()];
        assert.equal((await moves.next()).done, false);
        assert.equal((await versions.next()).done, false);
        await moves.return(undefined);
        await versions.return(undefined);
        assert.deepEqual(await collect(snapshot.transactions()), await collect(expected.transactions()));
        assert.deepEqual(await collect(snapshot.movements()), await collect(expected.movements()));
      } finally {
        await snapshot.close();
        await expected.close();
      }
      assert.equal(await idleInTransaction(), 0, 'closed: the transaction ended, the connection back');
      // That connection is the pool's again: a section read now must not run on it.
      await assert.rejects(collect(snapshot.movements()), /snapshot is closed/);
    },
  );

  await t.test('the zakat report pages and streams the same rows', async () => {
    const query = { sink: sinks.filter((s) => s !== TEST_SINK), start: PREV, end: DAY };
    const all = await collect(sqlite.zakatReport.rows(query));
    assert.ok(all.length > 100);
    assert.deepEqual(await collect(pg.zakatReport.rows(query)), all);
    for (const [limit, offset] of [
      [50, 0],
      [50, 120],
      [10, all.length - 5],
    ] as const)
      assert.deepEqual(
        await pg.zakatReport.page({ ...query, limit, offset }),
        await sqlite.zakatReport.page({ ...query, limit, offset }),
      );
  });

  await t.test('the payment report pages, counts, streams and finds the same payments', async () => {
    const filter = { agency: 'LZS', firstDay: PREV, lastDay: DAY };
    const all = await collect(sqlite.paymentReport.all(filter));
    assert.ok(all.length > 10);
    assert.deepEqual(await collect(pg.paymentReport.all(filter)), all);
    assert.equal(
      (await pg.paymentReport.page(filter, 1, 0)).total,
      (await sqlite.paymentReport.page(filter, 1, 0)).total,
    );
    for (const isApproved of [undefined, true, false])
      for (const offset of [0, 7])
        assert.deepEqual(
          await pg.paymentReport.page({ ...filter, isApproved }, 5, offset),
          await sqlite.paymentReport.page({ ...filter, isApproved }, 5, offset),
        );
    // The report's defaults when a query names no days: from the first day there is to the last.
    const everything = { agency: ['LZS', 'PPZ'], firstDay: '0001-01-01', lastDay: '9999-12-31' };
    const whole = await collect(sqlite.paymentReport.all(everything));
    assert.ok(whole.length >= all.length);
    assert.deepEqual(await collect(pg.paymentReport.all(everything)), whole);
    const sellerOrderNo = { ...everything, sellerOrderNo: whole[0]!.orderNo };
    assert.deepEqual(
      await pg.paymentReport.page(sellerOrderNo, 5, 0),
      await sqlite.paymentReport.page(sellerOrderNo, 5, 0),
    );
    assert.equal((await pg.paymentReport.page(sellerOrderNo, 1, 0)).total, 1);
    const one = all[3]!;
    assert.deepEqual(
      await pg.paymentReport.find(['LZS'], { orderNo: one.orderNo }),
      await sqlite.paymentReport.find(['LZS'], { orderNo: one.orderNo }),
    );
    assert.deepEqual(
      await pg.paymentReport.find(['LZS'], { refNo: one.refNo }),
      await sqlite.paymentReport.find(['LZS'], { refNo: one.refNo }),
    );
    for (const [limit, offset] of [
      [100, 0],
      [2, 1],
    ] as const) {
      assert.deepEqual(
        await pg.paymentReport.byEmail(one.email, ['LZS', 'PPZ'], limit, offset),
        await sqlite.paymentReport.byEmail(one.email, ['LZS', 'PPZ'], limit, offset),
      );
    }
    const streamed = async (store: Pick<Store, 'paymentReport'>) => {
      const rows = [];
      for await (const row of store.paymentReport.allByEmail(one.email, ['LZS', 'PPZ'])) rows.push(row);
      return rows;
    };
    assert.deepEqual(await streamed(pg), await streamed(sqlite));
  });

  await t.test('a replay export of the day is the same archive', async () => {
    const expected = await sqlite.reconArchive.exportDay(DAY, AS_OF);
    assert.ok(expected.batches.length > 0 && expected.payments.length > 0);
    assert.deepEqual(await pg.reconArchive.exportDay(DAY, AS_OF), expected);
  });

  await t.test("the operators' counts are the same", async () => {
    const since = new Date('2026-11-01T00:00:00Z');
    assert.deepEqual(await pg.ops.outboxBacklog(), await sqlite.ops.outboxBacklog());
    assert.deepEqual(await pg.ops.callbackCounts(), await sqlite.ops.callbackCounts());
    assert.deepEqual(await pg.ops.reconHealth(since), await sqlite.ops.reconHealth(since));
    assert.deepEqual(await pg.ops.unledgeredVersions(since), await sqlite.ops.unledgeredVersions(since));
  });
});
