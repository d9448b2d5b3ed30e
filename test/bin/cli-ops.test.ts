import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, tempDir } from '../helpers.ts';
import { runCli } from './processes.ts';

const packageVersion = (
  JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

test('amil --version prints the package version and exits 0', async () => {
  const shown = await runCli(['--version'], {});
  assert.equal(shown.code, 0, shown.stderr);
  assert.equal(shown.stdout.trim(), packageVersion);
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
