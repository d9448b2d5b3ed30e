/** The ops CLI run in this process: buildProgram over a temporary DATA_DIR, its output captured. */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createDeps, seedDemoData } from '../../core/bootstrap.ts';
import type { Deps } from '../../core/deps.ts';
import { createLogger } from '../../core/logger.ts';
import { buildProgram, runProgram } from '../../bin/cli/program.ts';
import { createCliContext } from '../../bin/cli/context.ts';
import { REPO_ROOT, tempDir } from '../helpers.ts';

const FIXTURE_DAY = path.join(REPO_ROOT, 'fixtures/days/2026-11-20');

/** A stream that keeps what is written to it. */
function capture(): { stream: Writable; text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

interface Cli {
  /** Runs `amil <args>` in this process; what it printed, and its exit code. */
  run: (args: string[], stdin?: string) => Promise<{ code: number; stdout: string; stderr: string }>;
  /** Every Deps the runs opened, in order. */
  opened: Deps[];
}

/** A CLI over a fresh SQLite file in a temp DATA_DIR (seeded with the demo agencies when asked). */
async function cliOver(t: TestContext, options: { seed?: boolean } = {}): Promise<Cli> {
  const env = { NODE_ENV: 'test', DATA_DIR: tempDir(t), SEED_DEMO: 'false' };
  const open = () => createDeps(env, { logger: createLogger('warn', capture().stream) });
  if (options.seed) {
    const deps = open();
    await seedDemoData(deps.store, new Date());
    await deps.store.close();
  }
  const opened: Deps[] = [];
  return {
    opened,
    run: async (args, stdin = '') => {
      const stdout = capture();
      const stderr = capture();
      const code = await runProgram(args, {
        from: 'user',
        openDeps: () => {
          const deps = open();
          opened.push(deps);
          return deps;
        },
        stdout: stdout.stream,
        stderr: stderr.stream,
        readStdin: () => stdin,
      });
      return { code, stdout: stdout.text(), stderr: stderr.text() };
    },
  };
}

test('buildProgram parses nothing when built, and --help prints to the given stream without opening the store', async (t) => {
  const out = capture();
  let opened = 0;
  const cli = createCliContext({
    openDeps: () => {
      opened += 1;
      throw new Error('--help needs no store');
    },
    stdout: out.stream,
    stderr: capture().stream,
  });
  const program = buildProgram(cli);
  assert.deepEqual(
    program.commands.map((c) => c.name()),
    [
      'partner',
      'anomalies',
      'agency',
      'callbacks',
      'token',
      'worker',
      'queues',
      'recon',
      'export-day',
      'replay',
      'db',
      'migrate-store',
    ],
  );
  assert.equal(out.text(), '', 'building printed nothing');

  const { run, opened: runs } = await cliOver(t);
  const help = await run(['agency', '--help']);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^Usage: amil agency \[options\] \[command\]$/m);
  assert.match(help.stdout, /rotate-key <code>/);
  assert.equal(runs.length + opened, 0, 'no store was opened');
});

test('agency add and show run in-process over a temp DATA_DIR: the key printed once, then the settings', async (t) => {
  const { run, opened } = await cliOver(t);
  const added = await run(['agency', 'add', 'MAIS', '--name', 'Majlis', '--add-charge', 'fpx=1.00']);
  assert.equal(added.code, 0, added.stderr);
  const key = /^API key: ([0-9a-f-]{36})$/m.exec(added.stdout)?.[1] ?? '';
  assert.ok(key, added.stdout);
  assert.equal(added.stderr, '');

  const shown = await run(['agency', 'show', 'MAIS']);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^MAIS {2}Majlis$/m);
  assert.match(shown.stdout, /^ {2}add charges: fpx RM 1\.00$/m);
  assert.ok(!shown.stdout.includes(key), 'show never prints the key');
  assert.equal(opened.length, 2, 'each run opened the store once');
  await assert.rejects(opened[0]!.store.agencies.list(), /not open/, 'and closed it when done');
});

test('refusals and usage errors in-process print one "amil:" line on stderr and return exit 1 or 2', async (t) => {
  const { run } = await cliOver(t);
  const cases: [string[], number, RegExp][] = [
    [['agency', 'show', 'NOPE'], 1, /^amil: no agency NOPE\n$/],
    [['token', 'revoke', 'nope'], 1, /^amil: no unrevoked token nope\n$/],
    [['agency', 'show', 'nope'], 2, /^amil: .*an agency code is 2-16 capitals and digits/],
    [['recon', 'run'], 2, /^amil: required option '--day <day>' not specified\n/],
    [['bogus'], 2, /^amil: unknown command 'bogus'\n/],
  ];
  for (const [args, code, message] of cases) {
    const result = await run(args);
    const label = `amil ${args.join(' ')}`;
    assert.equal(result.code, code, `${label}: ${result.stderr}`);
    assert.match(result.stderr, message, label);
    assert.equal(result.stdout, '', label);
  }
});

test('partner set-password --password-stdin reads the standard input it is given', async (t) => {
  const { run } = await cliOver(t);
  const set = await run(
    ['partner', 'set-password', 'bank-a', '--label', 'chosen', '--password-stdin'],
    'a-password-the-bank-chose\n',
  );
  assert.equal(set.code, 0, set.stderr);
  assert.equal(set.stdout, 'Partner bank-a: password "chosen" added.\n');
  const short = await run(['partner', 'set-password', 'bank-a', '--password-stdin'], 'short');
  assert.equal(short.code, 1);
  assert.match(short.stderr, /at least 16 characters/);
});

test('replay in-process writes the fixture day, exits 2 with no original to compare, and 0 against its own output', async (t) => {
  const { run } = await cliOver(t, { seed: true });
  const first = tempDir(t);
  const args = ['replay', '--day', '2026-11-20', '--from', FIXTURE_DAY, '--agency', 'LZS'];
  const alone = await run([...args, '--out', first, '--compare', tempDir(t)]);
  assert.equal(alone.code, 2, alone.stderr);
  const [workbook] = readdirSync(first);
  assert.match(workbook ?? '', /^LZS-2026-11-20-.*\.xlsx$/);
  assert.match(
    alone.stdout,
    new RegExp(`^${workbook}  sha256 [0-9a-f]{64}\\n  no original workbook to compare with\\n$`),
  );

  const again = await run([...args, '--out', tempDir(t), '--compare', first]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`^${workbook}  sha256 [0-9a-f]{64}\\n  identical\\n$`));
});
