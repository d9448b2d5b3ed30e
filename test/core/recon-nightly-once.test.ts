/**
 * The nightly run of a sink's day is recorded once, however many workers finish it at the same time: on
 * several machines two workers can both find no nightly run and both build the workbook (issue 17's
 * many-machines test found it); the store keeps the first and hands it to the second.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { openStore, type Store } from '../../core/store/index.ts';
import { openPgStore } from '../../core/store/pg/index.ts';
import type { NewReconRun } from '../../core/store/recon-runs.ts';
import { onCleanup, tempDir } from '../helpers.ts';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';

let server: Promise<TestPostgres> | undefined;
after(async () => {
  if (server) await (await server).stop();
});

const run = (file: string, trigger: NewReconRun['trigger'] = 'nightly'): NewReconRun => ({
  sink: 'LZS',
  businessDate: '2026-11-20',
  trigger,
  asOf: '2026-11-20T16:30:00.000Z',
  startedAt: '2026-11-20T16:30:01.000Z',
  finishedAt: '2026-11-20T16:30:02.000Z',
  fingerprint: 'f',
  file,
  fileSha256: 'a'.repeat(64),
  fileBytes: 5000,
  inputCounts: { transactions: 1 },
  totals: {},
  changes: null,
  email: true,
});

const engines: [string, (t: TestContext) => Promise<Pick<Store, 'reconRuns'>>][] = [
  [
    'sqlite',
    (t) => {
      const store = openStore(path.join(tempDir(t), 'amil.db'));
      onCleanup(t, () => store.close());
      return Promise.resolve(store);
    },
  ],
  [
    'postgresql',
    async (t) => {
      server ??= startPostgres();
      const store = openPgStore(await (await server).createTestDatabase());
      onCleanup(t, () => store.close());
      await store.ping();
      return store;
    },
  ],
];

for (const [engine, open] of engines) {
  void test(`two workers recording the same nightly run at once keep one run, the first (${engine})`, async (t) => {
    const { reconRuns } = await open(t);
    const [a, b] = await Promise.all([reconRuns.record(run('a.xlsx')), reconRuns.record(run('b.xlsx'))]);
    assert.equal(a.id, b.id, 'both are told of the same run');
    const runs = await reconRuns.list({ sink: 'LZS', limit: 10 });
    assert.deepEqual(
      runs.map((r) => [r.trigger, r.file]),
      [['nightly', a.file]],
    );
  });

  void test(`a manual run after the nightly one is recorded beside it (${engine})`, async (t) => {
    const { reconRuns } = await open(t);
    const nightly = await reconRuns.record(run('a.xlsx'));
    const manual = await reconRuns.record(run('b.xlsx', 'manual'));
    assert.notEqual(manual.id, nightly.id);
    assert.equal(manual.previousRun, nightly.id);
  });

  void test(`a run names as its previous the run its changes were measured against (${engine})`, async (t) => {
    const { reconRuns } = await open(t);
    const nightly = await reconRuns.record(run('a.xlsx'));
    // Two re-runs of the day, each compared with the latest run it read (the nightly one) before either was
    // recorded: the second recorded must not say it replaces the first, which it was never compared with.
    const first = await reconRuns.record({
      ...run('b.xlsx', 'manual'),
      comparedWith: nightly.id,
      changes: 'b',
    });
    const second = await reconRuns.record({
      ...run('c.xlsx', 'manual'),
      comparedWith: nightly.id,
      changes: 'c',
    });
    assert.deepEqual([first.previousRun, second.previousRun], [nightly.id, nightly.id]);
    assert.equal(
      (await reconRuns.latest('LZS', '2026-11-20'))?.id,
      second.id,
      'the latest is the last recorded',
    );
  });
}
