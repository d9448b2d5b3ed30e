/**
 * The promise end to end: one generated day posted through the real app (webhook, checkout store,
 * in-process pipeline) on SQLite and, separately, on PostgreSQL gives byte-identical workbooks.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { TEST_SINK, type Store } from '../../core/store/index.ts';
import { writeReconWorkbook } from '../../reports/reconciliation/workbook.ts';
import { EXCEPTION_CODES } from '../../pipeline/normalise/rules.ts';
import { tempDir } from '../helpers.ts';
import { AS_OF, DAY, generateDay } from '../support/recon-day.ts';
import { loadDay } from '../support/recon-load.ts';
import { completePgStore, testPgUrl } from '../support/pg-stores.ts';
import { SQLITE_APP } from '../support/test-database.ts';

async function workbook(store: Store, sink: string, file: string): Promise<Buffer> {
  const snapshot = await store.reconSnapshot.open(sink, DAY, AS_OF);
  try {
    const ready = await snapshot.readiness();
    assert.ok(ready.ledgered === ready.forSink && ready.normalised === ready.received, `${sink} caught up`);
    await writeReconWorkbook({ snapshot, title: `Workbook of ${sink}`, explanations: EXCEPTION_CODES, file });
  } finally {
    await snapshot.close();
  }
  return readFileSync(file);
}

test('a day posted through the app on PostgreSQL gives the workbooks it gives on SQLite, byte for byte', async (t) => {
  const generated = generateDay(300);
  const sqlite = await loadDay(t, generated, SQLITE_APP);
  const postgres = await loadDay(t, generated, {}, { store: await completePgStore(t, await testPgUrl()) });
  const dir = tempDir(t);
  const sinks = [...(await sqlite.deps.store.agencies.list()).map((a) => a.code), TEST_SINK];
  assert.deepEqual([...(await postgres.deps.store.agencies.list()).map((a) => a.code), TEST_SINK], sinks);
  // The PostgreSQL app stored the day itself: its own ledgers and payments, as many as SQLite's.
  const lzs = { agency: 'LZS', firstDay: DAY, lastDay: DAY };
  const entries = (await sqlite.deps.store.ledger.entries('LZS', DAY)).length;
  assert.ok(entries > 50);
  assert.equal((await postgres.deps.store.ledger.entries('LZS', DAY)).length, entries);
  assert.ok((await sqlite.deps.store.paymentReport.page(lzs, 1, 0)).total > 5);
  assert.equal(
    (await postgres.deps.store.paymentReport.page(lzs, 1, 0)).total,
    (await sqlite.deps.store.paymentReport.page(lzs, 1, 0)).total,
  );
  for (const sink of sinks) {
    const expected = await workbook(sqlite.deps.store, sink, path.join(dir, `${sink}-sqlite.xlsx`));
    const actual = await workbook(postgres.deps.store, sink, path.join(dir, `${sink}-pg.xlsx`));
    assert.ok(expected.length > 4000, `${sink}: a workbook with content`);
    assert.ok(actual.equals(expected), `${sink}: the PostgreSQL workbook differs from SQLite's`);
  }
});
