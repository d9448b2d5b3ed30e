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
import { onCleanup, REPO_ROOT, tempDir } from '../helpers.ts';
import { verifyPassword } from '../../core/passwords.ts';
import { totpCode, totpStep } from '../../core/totp.ts';

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
  /** Opens the same store as the runs (the caller closes it). */
  open: () => Deps;
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
    open,
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
      'user',
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
    ['partner', 'set-password', 'bank-a', '--new', '--label', 'chosen', '--password-stdin'],
    'a-password-the-bank-chose\n',
  );
  assert.equal(set.code, 0, set.stderr);
  assert.equal(set.stdout, 'Partner bank-a: password "chosen" added.\n');
  const short = await run(['partner', 'set-password', 'bank-a', '--password-stdin'], 'short');
  assert.equal(short.code, 1);
  assert.match(short.stderr, /at least 16 characters/);
});

test('partner set-password refuses a partner that does not exist unless --new: a typo makes no second partner', async (t) => {
  const { run, open } = await cliOver(t, { seed: true });
  // A second partner would take the bank's resent batches as new postings: its orderno keys are its own.
  const typo = await run(['partner', 'set-password', 'demo-bnak', '--label', '2026-12', '--revoke-others']);
  assert.equal(typo.code, 1, typo.stderr);
  assert.equal(typo.stdout, '');
  assert.match(
    typo.stderr,
    /^amil: no partner demo-bnak \(partners: demo-bank\); a new partner needs --new\n$/,
  );
  const taken = await run(['partner', 'set-password', 'demo-bank', '--new']);
  assert.equal(taken.code, 1, taken.stderr);
  assert.match(taken.stderr, /^amil: partner demo-bank exists/);
  assert.equal((await run(['partner', 'set-password', 'demo-bank', '--label', '2026-12'])).code, 0);
  assert.equal((await run(['partner', 'set-password', 'bank-b', '--new'])).code, 0);
  const deps = open();
  onCleanup(t, () => deps.store.close());
  const partners = await deps.store.partners.list();
  assert.deepEqual(partners.map((p) => [p.id, p.passwords.map((pw) => pw.label)]).sort(), [
    ['bank-b', [partners.find((p) => p.id === 'bank-b')?.passwords[0]?.label]],
    ['demo-bank', ['demo', '2026-12']],
  ]);
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

/** A session of the user as the dashboard makes one at sign-in, for the commands that must end it. */
async function sessionOf(deps: Deps, email: string, id: string): Promise<void> {
  const user = await deps.store.dashboardUsers.byEmail(email);
  const now = new Date();
  await deps.store.dashboardUsers.createSession(
    {
      idSha256: id,
      userId: user?.id ?? 0,
      csrf: 'csrf',
      pendingTotp: false,
      createdAt: now.toISOString(),
      lastSeenAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + 3_600_000).toISOString(),
    },
    { passwordHash: user?.passwordHash ?? '' },
  );
}

test('user add prints a generated password once, the one stored; list shows roles and never a password', async (t) => {
  const { run, open } = await cliOver(t, { seed: true });
  const added = await run([
    'user',
    'add',
    'Siti@LZS.example.my',
    '--agency',
    'LZS=viewer,PPZ=admin',
    '--name',
    'Siti',
  ]);
  assert.equal(added.code, 0, added.stderr);
  const password = /^Password: (\S+)$/m.exec(added.stdout)?.[1] ?? '';
  assert.ok(password.length >= 32, added.stdout);
  assert.match(added.stdout, /^Dashboard user siti@lzs\.example\.my created: .*LZS=viewer,PPZ=admin/m);
  const deps = open();
  t.after(() => deps.store.close());
  const stored = await deps.store.dashboardUsers.byEmail('siti@lzs.example.my');
  assert.ok(stored && (await verifyPassword(password, stored.passwordHash)), 'the printed password signs in');

  const listed = await run(['user', 'list']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^siti@lzs\.example\.my +LZS=viewer,PPZ=admin +Siti$/m);
  assert.match(
    listed.stdout,
    /^admin@lzs\.example\.my +LZS=admin +Demo admin \(LZS\)$/m,
    'the demo users too',
  );
  assert.ok(!listed.stdout.includes(password));
  const json = (await run(['user', 'list', '--json'])).stdout;
  assert.ok((JSON.parse(json) as { email: string }[]).some((u) => u.email === 'siti@lzs.example.my'));
  assert.doesNotMatch(json, /scrypt|passwordHash|totpSecret/, 'no hash or secret in the JSON either');
});

test('user set changes roles and name; --totp on prints the otpauth URL once, whose codes are accepted', async (t) => {
  const { run, open } = await cliOver(t, { seed: true });
  const set = await run([
    'user',
    'set',
    'admin@lzs.example.my',
    '--agency',
    'PPZ=viewer',
    '--remove-agency',
    'LZS',
    '--name',
    'Aminah',
    '--totp',
    'on',
  ]);
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, /^admin@lzs\.example\.my +PPZ=viewer +Aminah {2}\[totp\]$/m);
  const url = /^otpauth:\/\/totp\/\S+$/m.exec(set.stdout)?.[0] ?? '';
  const secret = new URL(url).searchParams.get('secret') ?? '';
  assert.match(secret, /^[A-Z2-7]{32}$/);
  const now = new Date();
  assert.notEqual(totpStep(secret, totpCode(secret, now), now), undefined);
  const listed = await run(['user', 'list']);
  assert.ok(!listed.stdout.includes(secret), 'the secret is shown once');

  const off = await run(['user', 'set', 'admin@lzs.example.my', '--totp', 'off']);
  assert.match(off.stdout, /^admin@lzs\.example\.my +PPZ=viewer +Aminah$/m);
  const deps = open();
  t.after(() => deps.store.close());
  assert.equal((await deps.store.dashboardUsers.byEmail('admin@lzs.example.my'))?.totpSecret, null);
});

test('user disable and reset-password end every session of the user; set --enable lets them back in', async (t) => {
  const { run, open } = await cliOver(t, { seed: true });
  const deps = open();
  t.after(() => deps.store.close());
  const users = deps.store.dashboardUsers;
  await sessionOf(deps, 'admin@lzs.example.my', 'session-1');
  const disabled = await run(['user', 'disable', 'admin@lzs.example.my']);
  assert.equal(disabled.code, 0, disabled.stderr);
  assert.notEqual((await users.session('session-1'))?.revokedAt, null);
  assert.notEqual((await users.byEmail('admin@lzs.example.my'))?.disabledAt, null);
  assert.match((await run(['user', 'list'])).stdout, /admin@lzs\.example\.my .*\[DISABLED /);
  await run(['user', 'set', 'admin@lzs.example.my', '--enable']);
  assert.equal((await users.byEmail('admin@lzs.example.my'))?.disabledAt, null);

  await sessionOf(deps, 'admin@lzs.example.my', 'session-2');
  const reset = await run(
    ['user', 'reset-password', 'admin@lzs.example.my', '--password-stdin'],
    'a-new-long-password\n',
  );
  assert.equal(reset.code, 0, reset.stderr);
  assert.equal(
    reset.stdout,
    'Dashboard user admin@lzs.example.my: password replaced; their sessions ended.\n',
  );
  assert.notEqual((await users.session('session-2'))?.revokedAt, null);
  const hash = (await users.byEmail('admin@lzs.example.my'))?.passwordHash ?? '';
  assert.ok(await verifyPassword('a-new-long-password', hash));
  assert.ok(!(await verifyPassword('demo-dashboard-lzs', hash)));
});

test('user refusals: an unknown agency, user or role, a taken address, a short password', async (t) => {
  const { run } = await cliOver(t, { seed: true });
  const cases: [string[], string, number, RegExp][] = [
    [['user', 'add', 'a@b.my', '--agency', 'NOPE=admin'], '', 1, /^amil: no agency NOPE\n$/],
    [['user', 'add', 'a@b.my', '--agency', 'LZS=owner'], '', 2, /use AGENCY=admin or AGENCY=viewer/],
    [
      ['user', 'add', 'admin@lzs.example.my', '--agency', 'LZS=admin'],
      '',
      1,
      /exists; change it with: amil user set/,
    ],
    [['user', 'add', 'not-an-address', '--agency', 'LZS=admin'], '', 2, /not an e-mail address/],
    [
      ['user', 'add', 'a@b.my', '--agency', 'LZS=admin', '--password-stdin'],
      'short\n',
      1,
      /at least 12 characters/,
    ],
    [['user', 'disable', 'nobody@b.my'], '', 1, /^amil: no dashboard user nobody@b\.my\n$/],
    [['user', 'set', 'admin@lzs.example.my', '--totp', 'maybe'], '', 2, /on or off/],
  ];
  for (const [args, stdin, code, message] of cases) {
    const result = await run(args, stdin);
    const label = `amil ${args.join(' ')}`;
    assert.equal(result.code, code, `${label}: ${result.stderr}`);
    assert.match(result.stderr, message, label);
    assert.equal(result.stdout, '', label);
  }
});
