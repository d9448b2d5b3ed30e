/**
 * Many machines, one PostgreSQL: the worker that builds a workbook keeps it in the database with its run,
 * so a web process or worker with a DATA_DIR of its own serves, mails and compares the same bytes (issue 17;
 * found by the many-machines test, where the other worker could not attach the workbook to the e-mail).
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { localWorkbook } from '../../core/recon-workbook.ts';
import { runReconciliation } from '../../pipeline/recon/run-day.ts';
import { reportToken, startApp } from '../helpers.ts';
import { AS_OF, DAY, generateDay } from '../support/recon-day.ts';
import { drainPipeline, loadDay } from '../support/recon-load.ts';
import { testPgUrl } from '../support/pg-stores.ts';
import { appDb } from '../support/app-db.ts';

/**
 * Two machines on one PostgreSQL database, each with a DATA_DIR of its own: a worker that built LZS's
 * workbook of a generated day, and a web process that has never seen the file.
 */
async function twoMachines(t: TestContext, postings: number) {
  const url = await testPgUrl();
  const worker = await loadDay(t, generateDay(postings), { DATABASE_URL: url });
  await drainPipeline(worker);
  const built = await runReconciliation(worker.deps, {
    sink: 'LZS',
    day: DAY,
    trigger: 'manual',
    asOf: AS_OF,
  });
  const web = await startApp(t, { DATABASE_URL: url, LOG_LEVEL: 'warn' });
  assert.notEqual(web.deps.config.dataDir, worker.deps.config.dataDir);
  const download = async () =>
    fetch(`${web.url}/api/report/v1/reconciliation/${built.run.id}/workbook`, {
      headers: { authorization: `Bearer ${await reportToken(web, ['LZS'])}` },
    });
  return { worker, web, built, download };
}

test('on PostgreSQL a workbook built on one machine is downloaded, byte for byte, through another', async (t) => {
  const { worker, built, download } = await twoMachines(t, 30);
  const original = readFileSync(built.path);
  const served = await download();
  assert.equal(served.status, 200, await served.clone().text());
  assert.ok(Buffer.from(await served.arrayBuffer()).equals(original), 'the same bytes on the other machine');

  // The worker's own copy gone (a machine replaced): the database still has it.
  rmSync(built.path);
  const again = await localWorkbook(worker.deps, built.run);
  assert.ok(again && readFileSync(again).equals(original));
});

test('a stored workbook that does not match its run’s SHA-256 is refused, never served', async (t) => {
  const { worker, web, built, download } = await twoMachines(t, 10);
  await appDb(t, worker).run(
    `UPDATE recon_files SET bytes = overlay(bytes placing '\\x00'::bytea from 100) WHERE run_id = ? AND seq = 0`,
    [built.run.id],
  );
  await assert.rejects(localWorkbook(web.deps, built.run), /does not match its SHA-256/);
  assert.equal((await download()).status, 500);
});
