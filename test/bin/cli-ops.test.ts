import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, startApp, tempDir } from '../helpers.ts';
import { businessDate, nextDay } from '../../core/time.ts';
import { runCli } from './processes.ts';

const packageVersion = (
  JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

test('amil --version prints the package version and exits 0', async () => {
  const shown = await runCli(['--version'], {});
  assert.equal(shown.code, 0, shown.stderr);
  assert.equal(shown.stdout.trim(), packageVersion);
});

test('amil recon run refuses a day that does not exist, with a clear message and exit code 2, and writes nothing', async (t) => {
  const app = await startApp(t);
  const env = app.storeEnv;
  for (const day of ['2026-11-31', '2026-02-30', '2026-13-01', '20261120']) {
    const run = await runCli(['recon', 'run', '--day', day, '--agency', 'LZS'], env);
    assert.equal(run.code, 2, `${day}: ${run.stdout}${run.stderr}`);
    assert.match(run.stderr, new RegExp(`^amil: .*${day}.* is not a day that exists`), day);
    assert.equal(run.stdout, '', 'no workbook reported');
  }
  assert.deepEqual(await app.deps.store.reconRuns.list({ limit: 10 }), [], 'no run recorded');
});

test('amil recon run refuses today and future days in Kuala Lumpur: a day not yet over has no workbook', async (t) => {
  const app = await startApp(t);
  const env = app.storeEnv;
  const today = businessDate(new Date());
  for (const day of [today, nextDay(today), '2999-01-01']) {
    const run = await runCli(['recon', 'run', '--day', day], env);
    assert.equal(run.code, 2, `${day}: ${run.stdout}${run.stderr}`);
    assert.match(run.stderr, new RegExp(`^amil: .*${day} is not over yet in Kuala Lumpur`), day);
  }
  assert.deepEqual(await app.deps.store.reconRuns.list({ limit: 10 }), [], 'no run recorded');
});

test('amil recon run says whether it queued the e-mail, and --no-mail records the run without mailing', async (t) => {
  const app = await startApp(t);
  const env = app.storeEnv;
  const emailJobs = async () =>
    (await app.deps.store.outbox.pending(100, new Date(Date.now() + 86_400_000))).filter(
      (r) => r.queue === 'recon-email',
    ).length;

  const quiet = await runCli(['recon', 'run', '--day', '2026-11-20', '--agency', 'LZS', '--no-mail'], env);
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.match(quiet.stdout, /^run \d+ LZS 2026-11-20: /m);
  assert.match(quiet.stdout, /^ {2}not mailed \(--no-mail\)$/m);
  assert.equal(await emailJobs(), 0, 'no e-mail queued');
  assert.equal((await app.deps.store.reconRuns.list({ limit: 10 })).length, 1, 'the run is recorded');

  const mailed = await runCli(['recon', 'run', '--day', '2026-11-20', '--agency', 'LZS'], env);
  assert.equal(mailed.code, 0, mailed.stderr);
  assert.match(mailed.stdout, /^ {2}e-mail queued to kewangan@lzs\.example\.my$/m);
  assert.equal(await emailJobs(), 1);

  // The list tells the run left unmailed on purpose from the one whose e-mail waits for the pipeline.
  const listed = await runCli(['recon', 'list', '--agency', 'LZS'], env);
  assert.equal(listed.code, 0, listed.stderr);
  const [second, first] = listed.stdout.trim().split('\n');
  assert.match(second ?? '', /\tmanual\t.*\tnot mailed yet$/);
  assert.match(first ?? '', /\tmanual\t.*\tnot mailed: no e-mail queued \(--no-mail, or no recipients\)$/);

  const bankTest = await runCli(['recon', 'run', '--day', '2026-11-20', '--agency', 'BANK-TEST'], env);
  assert.equal(bankTest.code, 0, bankTest.stderr);
  assert.match(bankTest.stdout, /^ {2}not mailed: no recipients \(BANK_TEST_RECIPIENTS\)$/m);
});

test('amil errors read the same way across commands: one line "amil: ...", exit 1, usage errors exit 2', async (t) => {
  const dataDir = tempDir(t);
  const env = { DATA_DIR: dataDir, SEED_DEMO: 'false' };
  const cases: [string[], number, RegExp][] = [
    [['agency', 'show', 'NOPE'], 1, /^amil: no agency NOPE$/],
    [['agency', 'set', 'NOPE', '--name', 'x'], 1, /^amil: no agency NOPE$/],
    [['agency', 'rotate-key', 'NOPE'], 1, /^amil: no agency NOPE$/],
    [['token', 'mint', '--agencies', 'NOPE'], 1, /^amil: no agency NOPE$/],
    [['recon', 'run', '--day', '2026-11-20', '--agency', 'NOPE'], 1, /^amil: no agency NOPE$/],
    [['token', 'revoke', 'nope'], 1, /^amil: no unrevoked token nope$/],
    [['anomalies', 'resolve', 'anm_nope', '--note', 'x'], 1, /^amil: no open anomaly anm_nope$/],
    [
      ['callbacks', 'redeliver', 'AM000000NOPE'],
      1,
      /^amil: order AM000000NOPE has no callback to send again$/,
    ],
    [
      ['partner', 'revoke-password', 'bank-a', '--all'],
      1,
      /^amil: partner bank-a has no password to revoke$/,
    ],
    [['agency', 'show', 'nope'], 2, /^amil: .*an agency code is 2-16 capitals and digits/],
    [['recon', 'run'], 2, /^amil: required option '--day <day>' not specified$/],
    [['bogus'], 2, /^amil: unknown command 'bogus'$/],
  ];
  for (const [args, code, message] of cases) {
    const result = await runCli(args, env);
    const label = `amil ${args.join(' ')}: ${result.stdout}${result.stderr}`;
    assert.equal(result.code, code, label);
    assert.match(result.stderr.split('\n')[0] ?? '', message, label);
    assert.doesNotMatch(result.stderr, /^error:|Error:|\n {4}at /m, label);
    assert.equal(result.stdout, '', label);
  }
});

test('amil agency show prints the DuitNow settings as fields, not a JSON blob', async (t) => {
  const app = await startApp(t);
  const shown = await runCli(['agency', 'show', 'LZS'], app.storeEnv);
  assert.equal(shown.code, 0, shown.stderr);
  assert.doesNotMatch(shown.stdout, /[{}"]/, 'no JSON');
  assert.match(shown.stdout, /^ {2}DuitNow:$/m);
  assert.match(shown.stdout, /^ {4}acquirer id: +890053$/m);
  assert.match(shown.stdout, /^ {4}merchant id: +LZS0000001$/m);
  assert.match(shown.stdout, /^ {4}merchant name: +LEMBAGA ZAKAT SELANGOR$/m);
  assert.match(shown.stdout, /^ {4}merchant city: +SHAH ALAM$/m);
  assert.match(shown.stdout, /^ {4}category code: +8661$/m);

  const created = await runCli(['agency', 'add', 'MAIS', '--name', 'Majlis'], app.storeEnv);
  assert.equal(created.code, 0, created.stderr);
  const bare = await runCli(['agency', 'show', 'MAIS'], app.storeEnv);
  assert.match(bare.stdout, /^ {2}DuitNow: not set up \(amil agency set MAIS --duitnow-\.\.\.\)$/m);
});
