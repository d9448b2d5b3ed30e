/** The ops CLI: `npm run amil -- <command>` (or `npx amil <command>`). */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError } from '../core/config.ts';
import { createDeps } from '../core/bootstrap.ts';
import { createLogger } from '../core/logger.ts';
import { generatePassword, hashPassword } from '../core/passwords.ts';
import type { Deps } from '../core/deps.ts';
import { createBullRuntime, JOB_OPTIONS } from '../pipeline/bullmq.ts';
import { createInProcessRelay } from '../pipeline/relay.ts';
import type { PipelineRuntime } from '../pipeline/runtime.ts';
import { runMain } from './run-main.ts';
import { startWorker } from './start-worker.ts';

const program = new Command('amil')
  .description('Operate amil: partners, anomalies, pipeline queues and workers')
  .showHelpAfterError();

let deps: Deps | undefined;
/** Opened on first use, so `--help` needs no database. The CLI logs warnings only, to stderr. */
function getDeps(): Deps {
  deps ??= createDeps(process.env, { logger: createLogger('warn', process.stderr) });
  return deps;
}

const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const printJson = (value: unknown): void => print(JSON.stringify(value, null, 2));

const partnerId = (value: string): string => {
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(value)) {
    throw new InvalidArgumentError('use lower-case letters, digits and dashes (e.g. demo-bank)');
  }
  return value;
};
const label = (value: string): string => {
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(value)) throw new InvalidArgumentError('letters, digits and . _ : -');
  return value;
};

const partner = program.command('partner').description('Bank webhook partners and their X-API-Password');

partner
  .command('set-password')
  .description(
    'Add a password for a partner (created on first use). Earlier passwords stay valid until revoked, ' +
      'so the partner can switch without downtime. Prints a generated password once.',
  )
  .argument('<partner>', 'partner id, e.g. demo-bank', partnerId)
  .option('--label <label>', 'name of this password (default: the current UTC time)', label)
  .option('--password-stdin', 'read the password from standard input instead of generating one')
  .option('--revoke-others', 'revoke every other password of the partner at once')
  .action(async (id: string, opts: { label?: string; passwordStdin?: boolean; revokeOthers?: boolean }) => {
    const { store, clock } = getDeps();
    const now = clock.now();
    const password = opts.passwordStdin ? readFileSync(0, 'utf8').trim() : generatePassword();
    if (password.length < 16)
      throw new InvalidArgumentError('a partner password needs at least 16 characters');
    const passwordLabel = opts.label ?? now.toISOString().replace(/\.\d{3}Z$/, 'Z');
    await store.partners.addPassword({
      partnerId: id,
      label: passwordLabel,
      hash: await hashPassword(password),
      now,
    });
    if (opts.revokeOthers)
      await store.partners.revokePasswords({ partnerId: id, exceptLabel: passwordLabel, now });
    print(
      `Partner ${id}: password "${passwordLabel}" added${opts.revokeOthers ? '; all others revoked' : ''}.`,
    );
    if (!opts.passwordStdin) print(`X-API-Password: ${password}\n(shown once; only its hash is stored)`);
  });

partner
  .command('revoke-password')
  .description('Revoke one password of a partner (or all of them)')
  .argument('<partner>', 'partner id', partnerId)
  .option('--label <label>', 'the password to revoke', label)
  .option('--all', 'revoke every password of the partner')
  .action(async (id: string, opts: { label?: string; all?: boolean }) => {
    if (!opts.label && !opts.all) throw new InvalidArgumentError('give --label <label> or --all');
    const { store, clock } = getDeps();
    const revoked = await store.partners.revokePasswords({
      partnerId: id,
      ...(opts.label !== undefined && { label: opts.label }),
      now: clock.now(),
    });
    print(`Partner ${id}: ${revoked} password(s) revoked.`);
    if (revoked === 0) process.exitCode = 1;
  });

partner
  .command('list')
  .description('Partners and their passwords (labels and dates, never the passwords)')
  .option('--json', 'machine-readable output')
  .action(async (opts: { json?: boolean }) => {
    const partners = await getDeps().store.partners.list();
    if (opts.json) return printJson(partners);
    if (partners.length === 0) return print('No partners. Add one: amil partner set-password <partner>');
    for (const p of partners) {
      print(`${p.id} (since ${p.createdAt})`);
      for (const pw of p.passwords) {
        print(
          `  ${pw.label.padEnd(24)} created ${pw.createdAt}  ${pw.revokedAt ? `revoked ${pw.revokedAt}` : 'ACTIVE'}`,
        );
      }
    }
  });

const anomalies = program.command('anomalies').description('Bank records that contradicted what was stored');

anomalies
  .command('list')
  .description('List anomalies (default: open ones)')
  .option('--status <status>', 'open, resolved or all', 'open')
  .option('--day <YYYY-MM-DD>', 'business day the anomaly was received on')
  .option('--json', 'machine-readable output, with both versions')
  .action(async (opts: { status: string; day?: string; json?: boolean }) => {
    if (!['open', 'resolved', 'all'].includes(opts.status)) {
      throw new InvalidArgumentError('--status is open, resolved or all');
    }
    const rows = await getDeps().store.anomalies.list({
      ...(opts.status !== 'all' && { status: opts.status as 'open' | 'resolved' }),
      ...(opts.day !== undefined && { businessDate: opts.day }),
    });
    if (opts.json) {
      return printJson(
        rows.map((r) => ({
          ...r,
          storedRecord: JSON.parse(r.storedRecord) as unknown,
          incomingRecord: JSON.parse(r.incomingRecord) as unknown,
        })),
      );
    }
    if (rows.length === 0) return print(`No ${opts.status === 'all' ? '' : `${opts.status} `}anomalies.`);
    for (const r of rows) {
      print(`${r.id}  ${r.status.padEnd(8)} ${r.orderno}  seen ${r.seenCount}x, first ${r.firstSeenAt}`);
      print(`  ${r.reason}`);
      print(`  stored v${r.storedVersion}: ${r.storedRecord}`);
      print(`  incoming:  ${r.incomingRecord}`);
      if (r.resolutionNote) print(`  resolved ${r.resolvedAt}: ${r.resolutionNote}`);
    }
  });

anomalies
  .command('resolve')
  .description('Mark an anomaly resolved, with a note saying what was done')
  .argument('<id>', 'anomaly id (anm_...)')
  .requiredOption(
    '--note <text>',
    'what was decided, e.g. "bank confirmed the success; failed resent in error"',
  )
  .action(async (id: string, opts: { note: string }) => {
    const { store, clock } = getDeps();
    if (!(await store.anomalies.resolve(id, opts.note, clock.now()))) {
      print(`No open anomaly ${id}.`);
      process.exitCode = 1;
      return;
    }
    print(`Anomaly ${id} resolved.`);
  });

program
  .command('worker')
  .description('Run a pipeline worker (needs REDIS_URL); the same as npm run worker')
  .action(async () => {
    await runMain(startWorker);
  });

const queues = program
  .command('queues')
  .description(
    'Pipeline queues: waiting, active, failed jobs (BullMQ with REDIS_URL, else the in-process outbox)',
  )
  .option('--json', 'machine-readable output')
  .action(async (opts: { json?: boolean }) => {
    await withRuntime(async (runtime) => {
      const counts = await runtime.counts();
      const failed = await runtime.failed();
      // In Redis mode the outbox shows what waits to reach Redis (e.g. while it is down).
      const outbox = await getDeps().store.outbox.stats();
      if (opts.json) return printJson({ runtime: runtime.kind, counts, failed, outbox });
      print(`runtime: ${runtime.kind}`);
      if (runtime.kind === 'bullmq') {
        const waiting = outbox.reduce((n, q) => n + q.waiting, 0);
        print(`outbox: ${waiting} job(s) waiting to be handed to Redis`);
      }
      print(
        `${'queue'.padEnd(16)}${['waiting', 'active', 'delayed', 'failed', 'completed'].map((h) => h.padStart(10)).join('')}`,
      );
      for (const c of counts) {
        print(
          `${c.queue.padEnd(16)}${[c.waiting, c.active, c.delayed, c.failed, c.completed].map((n) => String(n).padStart(10)).join('')}`,
        );
      }
      for (const f of failed)
        print(`failed ${f.queue} ${f.jobId} after ${f.attempts} attempt(s): ${f.error}`);
    });
  });

queues
  .command('retry')
  .description('Put failed jobs back in line (of one queue, or all)')
  .argument('[queue]', 'e.g. ledger-LZS')
  .action(async (queue: string | undefined) => {
    await withRuntime(async (runtime) => {
      print(`${await runtime.retryFailed(queue)} failed job(s) put back in line.`);
    });
  });

/** The pipeline runtime this configuration uses, without running any job: to look and to retry. */
async function withRuntime(use: (runtime: PipelineRuntime) => Promise<void>): Promise<void> {
  const d = getDeps();
  const runtime = d.config.redisUrl
    ? createBullRuntime(d, { pollMs: 500, jobOptions: JOB_OPTIONS, withWorkers: false })
    : createInProcessRelay(d);
  try {
    await use(runtime);
  } finally {
    await runtime.stop();
  }
}

try {
  await program.parseAsync();
} catch (err) {
  const message =
    err instanceof ConfigError || err instanceof InvalidArgumentError ? err.message : String(err);
  process.stderr.write(`amil: ${message}\n`);
  process.exitCode = 1;
} finally {
  deps?.store.close();
}
