import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { runReconciliation } from '../../pipeline/recon/run-day.ts';
import { exportDay, readDayDir, replayDay } from '../../pipeline/recon/replay.ts';
import { TEST_SINK } from '../../core/store/index.ts';
import { REPO_ROOT, startApp, tempDir } from '../helpers.ts';
import { runCli } from '../bin/processes.ts';
import { runProgram } from '../../bin/cli/program.ts';
import { cliEnvironment } from '../../bin/cli/environment.ts';
import { Writable } from 'node:stream';
import { AS_OF, DAY, generateDay } from '../support/recon-day.ts';
import { drainPipeline, loadDay } from '../support/recon-load.ts';
import { readWorkbook, sen, summaryOf } from '../support/workbook.ts';

const FIXTURE_DAY = path.join(REPO_ROOT, 'fixtures/days/2026-11-20');

test('a day exported from the archive replays in an isolated store to byte-identical workbooks, twice', async (t) => {
  const app = await loadDay(t, generateDay(600));
  await drainPipeline(app);
  const originals = new Map<string, Buffer>();
  for (const sink of ['LZS', 'PPZ', TEST_SINK]) {
    const { path: file } = await runReconciliation(app.deps, {
      sink,
      day: DAY,
      trigger: 'nightly',
      asOf: AS_OF,
    });
    originals.set(path.basename(file), readFileSync(file));
  }
  const exported = tempDir(t);
  const manifest = await exportDay(app.deps, DAY, AS_OF, exported);
  // Earlier days come as excerpts: only the records of postings the day shows (pending, settled today).
  assert.ok(manifest.batches.some((b) => b.excerpt) && manifest.batches.some((b) => !b.excerpt));
  assert.ok(
    !readFileSync(path.join(exported, 'manifest.json'), 'utf8').includes('apiKey'),
    'no API key is exported',
  );

  const agencies = (await app.deps.store.agencies.list()).map((a) => ({
    code: a.code,
    name: a.name,
    settings: a.settings,
  }));
  for (const attempt of [1, 2]) {
    const out = tempDir(t);
    const results = await replayDay(app.deps, readDayDir(exported, DAY, { agencies }), { outDir: out });
    assert.equal(results.length, 3);
    for (const { path: file } of results) {
      const original = originals.get(path.basename(file));
      assert.ok(original, `replay ${attempt} wrote ${path.basename(file)}, a file the original run wrote`);
      assert.ok(
        readFileSync(file).equals(original),
        `replay ${attempt}: ${path.basename(file)} is byte-identical`,
      );
    }
  }
});

interface ExpectedRecon {
  /** Each sink's workbook, byte for byte: a refactoring must not change one byte of the fixture day's workbooks. */
  workbook_sha256: Record<string, string>;
  as_of: string;
  sinks: Record<
    string,
    {
      transactions: number;
      success: [number, number];
      pending: [number, number];
      failed: [number, number];
      flagged: number;
      pending_closing: [number, number];
      adjustments: number;
      /** Every version the bank sent on the day (a duplicate is not one). */
      changes_received: number;
      /** The pending roll's movements, [count, sen]: became pending, then succeeded, then failed. */
      pending_roll: [[number, number], [number, number], [number, number]];
    }
  >;
}

test('the fixture day replays to its committed expected totals', async (t) => {
  const app = await startApp(t, { LOG_LEVEL: 'warn' });
  const expected = JSON.parse(
    readFileSync(path.join(FIXTURE_DAY, 'expected-recon.json'), 'utf8'),
  ) as ExpectedRecon;
  const agencies = (await app.deps.store.agencies.list()).map((a) => ({
    code: a.code,
    name: a.name,
    settings: a.settings,
  }));
  const archive = readDayDir(FIXTURE_DAY, '2026-11-20', { agencies });
  assert.equal(archive.asOf.toISOString(), expected.as_of);
  const results = await replayDay(app.deps, archive, { outDir: tempDir(t) });
  const actual: ExpectedRecon['sinks'] = {};
  for (const { path: file, run } of results) {
    const s = summaryOf((await readWorkbook(file)).sheet('Summary'));
    const status = (name: string): [number, number] => {
      const row = s.table('By status').get(name);
      return [Number(row?.[0]), sen(row?.[1])];
    };
    const roll = s.table('Pending roll');
    const closing = roll.get('Closing (pending at as-of)');
    const movement = (label: string): [number, number] => [
      Number(roll.get(label)?.[0]),
      sen(roll.get(label)?.[1]),
    ];
    actual[run.sink === TEST_SINK ? 'BANK-TEST' : run.sink] = {
      transactions: Number(s.value('Transactions of the day')[0]),
      success: status('success'),
      pending: status('pending'),
      failed: status('failed'),
      flagged: Number(s.value('Flagged transactions')[0]),
      pending_closing: [Number(closing?.[0]), sen(closing?.[1])],
      adjustments: Number(s.value('Changes to earlier days (adjustments)')[0]),
      changes_received: Number(s.value('Changes received during the day')[0]),
      pending_roll: [
        movement('+ became pending'),
        movement('- pending that succeeded'),
        movement('- pending that failed'),
      ],
    };
  }
  assert.deepEqual(actual, expected.sinks);
  const hashes = Object.fromEntries(
    results.map(({ run }) => [run.sink === TEST_SINK ? 'BANK-TEST' : run.sink, run.fileSha256]),
  );
  assert.deepEqual(hashes, expected.workbook_sha256, 'the fixture day gives the same workbook bytes');
  // The same figures as the webhook fixture's own expected.json (bank postings only).
  const webhook = JSON.parse(readFileSync(path.join(FIXTURE_DAY, 'expected.json'), 'utf8')) as {
    by_agency: Record<string, { success_sen: number }>;
  };
  assert.equal(actual.LZS?.success[1], webhook.by_agency.BANKLZS?.success_sen);
  assert.equal(actual.PPZ?.success[1], webhook.by_agency.BANKPPZ?.success_sen);
  assert.equal(actual['BANK-TEST']?.success[1], webhook.by_agency.BANK?.success_sen);
});

test('amil recon run, then amil replay --from-archive --compare says identical', async (t) => {
  const app = await startApp(t, { LOG_LEVEL: 'warn' });
  for (const file of ['01-morning.json', '02-bank-live-test.json', '03-afternoon.json', '04-evening.json'])
    assert.equal((await app.postBatch(readFileSync(path.join(FIXTURE_DAY, file)))).status, 200);
  await drainPipeline(app);
  const env = { ...app.storeEnv, LOG_LEVEL: 'warn' };
  const run = await runCli(['recon', 'run', '--day', '2026-11-20'], env);
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    /^run \d+ LZS 2026-11-20: 16 transaction\(s\), collected RM 10002\.09, pending roll balances$/m,
  );

  const out = tempDir(t);
  const replay = await runCli(
    ['replay', '--day', '2026-11-20', '--from-archive', '--out', out, '--compare'],
    env,
  );
  assert.equal(replay.code, 0, replay.stdout + replay.stderr);
  assert.equal(replay.stdout.match(/^ {2}identical$/gm)?.length, 3, replay.stdout);

  // A workbook that differs is reported cell by cell, and the exit code says so: here the fixture files
  // replayed as of 00:30 the next day, against the archive's run as of now under the same name.
  const other = tempDir(t);
  const lzs = readdirSync(out).find((f) => f.startsWith('LZS-'))!;
  copyFileSync(path.join(out, lzs), path.join(other, 'LZS-2026-11-20-asof-20261120T163000Z.xlsx'));
  const fixture = await runCli(
    [
      'replay',
      '--day',
      '2026-11-20',
      '--from',
      FIXTURE_DAY,
      '--out',
      tempDir(t),
      '--agency',
      'LZS',
      '--compare',
      other,
    ],
    env,
  );
  assert.equal(fixture.code, 2, fixture.stderr);
  assert.match(fixture.stdout, /^ {2}differs: \d+ cell\(s\)$/m);
  assert.match(
    fixture.stdout,
    /^ {4}Summary!B5: "\d{4}-\d\d-\d\d \d\d:\d\d:\d\d" -> "2026-11-21 00:30:00"$/m,
  );
});

/** Runs `amil <args>` in this process over the environment's store; its output and exit code. */
async function amilInProcess(args: string[], env: Record<string, string>) {
  const chunks: string[] = [];
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const stderr = new Writable({ write: (_chunk, _encoding, done) => done() });
  const code = await runProgram(args, { ...cliEnvironment(env, stderr), stdout, stderr, from: 'user' });
  return { code, stdout: chunks.join('') };
}

test('after one agency is re-run by hand, replay --from-archive --compare checks each workbook against its own latest run', async (t) => {
  const app = await startApp(t, { LOG_LEVEL: 'warn' });
  for (const file of ['01-morning.json', '02-bank-live-test.json', '03-afternoon.json', '04-evening.json'])
    assert.equal((await app.postBatch(readFileSync(path.join(FIXTURE_DAY, file)))).status, 200);
  await drainPipeline(app);
  const env = { NODE_ENV: 'test', LOG_LEVEL: 'warn', ...app.storeEnv };
  // The night's runs of every sink, then PPZ alone again later (operations.md, AmilNightlyRunMissing).
  assert.equal((await amilInProcess(['recon', 'run', '--day', '2026-11-20', '--no-mail'], env)).code, 0);
  const again = ['recon', 'run', '--day', '2026-11-20', '--agency', 'PPZ', '--no-mail'];
  assert.equal((await amilInProcess(again, env)).code, 0);

  const replay = ['replay', '--day', '2026-11-20', '--from-archive', '--compare'];
  const all = await amilInProcess([...replay, '--out', tempDir(t)], env);
  assert.equal(all.stdout.match(/^ {2}identical$/gm)?.length, 3, all.stdout);
  assert.equal(all.code, 0, all.stdout);
  // One agency: as of that agency's own latest run, not of another agency's later one.
  const lzs = await amilInProcess([...replay, '--agency', 'LZS', '--out', tempDir(t)], env);
  assert.match(lzs.stdout, /^LZS-2026-11-20-asof-\S+\.xlsx {2}sha256 [0-9a-f]{64}\n {2}identical\n$/);
  assert.equal(lzs.code, 0, lzs.stdout);
});
