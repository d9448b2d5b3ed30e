/** The ops CLI: `npm run amil -- <command>` (or `npx amil <command>`). */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Presets, SingleBar } from 'cli-progress';
import { randomUUID } from 'node:crypto';
import { Command, InvalidArgumentError } from 'commander';
import { createDeps } from '../core/bootstrap.ts';
import { createLogger } from '../core/logger.ts';
import { generatePassword, hashPassword } from '../core/passwords.ts';
import type { Deps } from '../core/deps.ts';
import { formatSen, ringgitStringToSen } from '../core/money.ts';
import { agencyLogo } from '../core/agency-logo.ts';
import { mintReportToken, parseTtl } from '../core/report-tokens.ts';
import {
  DEFAULT_AGENCY_SETTINGS,
  type AddChargeRule,
  type AgencyRow,
  type AgencySettings,
  TEST_SINK,
} from '../core/store/index.ts';
import { createBullRuntime } from '../pipeline/bullmq.ts';
import { createInProcessRelay } from '../pipeline/relay.ts';
import type { PipelineRuntime } from '../pipeline/runtime.ts';
import { CliError, configureErrors, reportError } from './cli-errors.ts';
import { runMain } from './run-main.ts';
import { startWorker } from './start-worker.ts';
import { asOfNow, reconSinks, runReconciliation } from '../pipeline/recon/run-day.ts';
import { exportDay, readDayDir, replayDay } from '../pipeline/recon/replay.ts';
import { compareWorkbooks } from '../reports/reconciliation/compare.ts';
import { systemClock } from '../core/clock.ts';
import { businessDate, isCalendarDay, parseOffsetDateTime, prevDay } from '../core/time.ts';
import { version } from '../core/version.ts';

const program = configureErrors(new Command('amil'))
  .description(
    'Operate amil: partners, agencies and keys, report tokens, anomalies, pipeline queues and workers',
  )
  .version(version, '-V, --version', 'print the version of amil');

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
    if (revoked === 0)
      throw new CliError(
        `partner ${id} has no ${opts.label !== undefined ? `password "${opts.label}"` : 'password'} to revoke`,
      );
    print(`Partner ${id}: ${revoked} password(s) revoked.`);
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
    if (!(await store.anomalies.resolve(id, opts.note, clock.now())))
      throw new CliError(`no open anomaly ${id}`);
    print(`Anomaly ${id} resolved.`);
  });

const agencyCode = (value: string): string => {
  if (!/^[A-Z][A-Z0-9]{1,15}$/.test(value))
    throw new InvalidArgumentError('an agency code is 2-16 capitals and digits, e.g. LZS');
  return value;
};
const list = (value: string): string[] =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
const emails = (value: string): string[] => {
  const out = list(value);
  for (const e of out)
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(e)) throw new InvalidArgumentError(`not an email: ${e}`);
  return out;
};
const hosts = (value: string): string[] => {
  const out = list(value).map((h) => h.toLowerCase());
  for (const h of out)
    if (!/^[a-z0-9.-]{1,253}(:\d{1,5})?$/.test(h)) throw new InvalidArgumentError(`not a host: ${h}`);
  return out;
};
const categories = (value: string): string[] => {
  const out = list(value);
  for (const c of out)
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(c))
      throw new InvalidArgumentError(`category ids are lower-case words with dashes: ${c}`);
  return out;
};
/** `fpx=1.00` (ringgit) or `card=1.5%`, repeatable. */
const addCharge = (
  value: string,
  previous: AgencySettings['addCharges'] = {},
): AgencySettings['addCharges'] => {
  const match = /^(fpx|card|ewallet)=(?:(\d{1,4}(?:\.\d{1,2})?)|(\d{1,2}(?:\.\d{1,2})?)%)$/.exec(value);
  if (!match)
    throw new InvalidArgumentError('use METHOD=RINGGIT or METHOD=PERCENT%, e.g. fpx=1.00 or card=1.5%');
  const [, method = 'fpx', ringgit, percent] = match;
  const rule: AddChargeRule =
    ringgit !== undefined ? { fixedSen: ringgitStringToSen(ringgit) ?? 0 } : { percent: Number(percent) };
  return { ...previous, [method]: rule };
};
/** `zakat-fitrah=English name|Malay name`, repeatable: what payers read for a category. */
const categoryName = (
  value: string,
  previous: AgencySettings['categoryNames'] = {},
): AgencySettings['categoryNames'] => {
  const match = /^([a-z0-9][a-z0-9-]{0,62})=([^|]{1,80})\|([^|]{1,80})$/.exec(value);
  const [, id = '', en = '', ms = ''] = match ?? [];
  if (!match || en.trim() === '' || ms.trim() === '')
    throw new InvalidArgumentError(
      'use ID="English name|Malay name", e.g. zakat-fitrah="Zakat Fitrah|Zakat Fitrah"',
    );
  return { ...previous, [id]: { en: en.trim(), ms: ms.trim() } };
};
const bounded =
  (max: number) =>
  (value: string): string => {
    if (value.length === 0 || value.length > max)
      throw new InvalidArgumentError(`1 to ${max} characters (it is written into a QR code tag)`);
    return value;
  };

/** An ISO 18245 merchant category code: 4 digits. */
function mcc(value: string): string {
  if (!/^\d{4}$/.test(value)) throw new InvalidArgumentError('4 digits, e.g. 8661 (religious organisations)');
  return value;
}

const agency = program
  .command('agency')
  .description('Agencies (tenants): API keys, categories, add charges, recipients, callback hosts, DuitNow');

interface AgencyOptions {
  name?: string;
  categories?: string[];
  recipients?: string[];
  callbackHosts?: string[];
  addCharge?: AgencySettings['addCharges'];
  categoryName?: AgencySettings['categoryNames'];
  logo?: string;
  duitnowAcquirer?: string;
  duitnowMerchant?: string;
  duitnowName?: string;
  duitnowCity?: string;
  duitnowCategory?: string;
  acceptUnsignedOrders?: string;
}

function withAgencyOptions(command: Command): Command {
  return command
    .option(
      '--categories <ids>',
      'payment categories, comma-separated (e.g. zakat-fitrah,zakat-pendapatan)',
      categories,
    )
    .option(
      '--category-name <id=names>',
      'what payers read for a category: ID="English|Malay" (repeatable)',
      categoryName,
    )
    .option('--logo <file>', 'the agency logo payers see: PNG, JPEG or WebP, at most 64 KB')
    .option('--recipients <emails>', 'report e-mail recipients, comma-separated', emails)
    .option('--callback-hosts <hosts>', 'hosts a returnUrl may point at, comma-separated', hosts)
    .option('--add-charge <rule>', 'add charge per method: fpx=1.00 or card=1.5% (repeatable)', addCharge)
    .option('--duitnow-acquirer <id>', 'DuitNow acquirer id', bounded(25))
    .option('--duitnow-merchant <id>', 'DuitNow merchant id', bounded(25))
    .option('--duitnow-name <name>', 'DuitNow merchant name (at most 25)', bounded(25))
    .option('--duitnow-city <city>', 'DuitNow merchant city (at most 15)', bounded(15))
    .option('--duitnow-category <code>', 'DuitNow merchant category code, 4 digits (default 8661)', mcc)
    .option('--accept-unsigned-orders <yes|no>', 'take checkout orders without a signature');
}

function settingsFrom(opts: AgencyOptions, current: AgencySettings): Partial<AgencySettings> {
  const change: Partial<AgencySettings> = {};
  if (opts.categories) change.paymentCategories = opts.categories;
  if (opts.recipients) change.reportRecipients = opts.recipients;
  if (opts.callbackHosts) change.callbackHosts = opts.callbackHosts;
  if (opts.addCharge) change.addCharges = { ...current.addCharges, ...opts.addCharge };
  if (opts.logo !== undefined) {
    const logo = agencyLogo(readFileSync(opts.logo));
    if (typeof logo === 'string') throw new InvalidArgumentError(`--logo: ${logo}`);
    change.logo = logo;
  }
  if (opts.categoryName) {
    const known = opts.categories ?? current.paymentCategories;
    const unknown = Object.keys(opts.categoryName).filter((id) => !known.includes(id));
    if (unknown.length > 0)
      throw new InvalidArgumentError(`not a payment category of this agency: ${unknown.join(', ')}`);
    change.categoryNames = { ...current.categoryNames, ...opts.categoryName };
  }
  const duitnow = {
    ...(opts.duitnowAcquirer !== undefined && { acquirerId: opts.duitnowAcquirer }),
    ...(opts.duitnowMerchant !== undefined && { merchantId: opts.duitnowMerchant }),
    ...(opts.duitnowName !== undefined && { name: opts.duitnowName }),
    ...(opts.duitnowCity !== undefined && { city: opts.duitnowCity }),
    ...(opts.duitnowCategory !== undefined && { categoryCode: opts.duitnowCategory }),
  };
  if (Object.keys(duitnow).length > 0) change.duitnow = { ...current.duitnow, ...duitnow };
  if (opts.acceptUnsignedOrders !== undefined) {
    if (!['yes', 'no'].includes(opts.acceptUnsignedOrders))
      throw new InvalidArgumentError('--accept-unsigned-orders is yes or no');
    change.acceptUnsignedOrders = opts.acceptUnsignedOrders === 'yes';
  }
  return change;
}

function printAgency(row: AgencyRow): void {
  const s = row.settings;
  const charge = (r: AddChargeRule) => ('fixedSen' in r ? `RM ${formatSen(r.fixedSen)}` : `${r.percent}%`);
  print(`${row.code}  ${row.name}`);
  print(
    `  API key: ${row.hasApiKey ? `set (rotated ${row.apiKeyRotatedAt}); shown only when created or rotated` : 'none'}`,
  );
  print(`  payment categories: ${s.paymentCategories.join(', ') || '-'}`);
  for (const id of s.paymentCategories) {
    const names = s.categoryNames[id];
    print(`    ${id}: ${names ? `${names.en} | ${names.ms}` : '(no name: payers see the id)'}`);
  }
  print(
    `  add charges: ${
      Object.entries(s.addCharges)
        .map(([m, r]) => `${m} ${charge(r)}`)
        .join(', ') || '-'
    }`,
  );
  print(`  report recipients: ${s.reportRecipients.join(', ') || '-'}`);
  print(`  callback hosts: ${s.callbackHosts.join(', ') || '-'}`);
  printDuitNow(row.code, s.duitnow);
  print(`  accepts unsigned orders: ${s.acceptUnsignedOrders ? 'yes' : 'no'}`);
  print(`  logo: ${s.logo ? `${s.logo.type}, ${Buffer.from(s.logo.base64, 'base64').length} bytes` : '-'}`);
}

/** The DuitNow settings, one field a line, named as the `--duitnow-*` options set them. */
function printDuitNow(code: string, duitnow: AgencySettings['duitnow']): void {
  if (Object.values(duitnow).every((v) => v === undefined))
    return print(`  DuitNow: not set up (amil agency set ${code} --duitnow-...)`);
  print('  DuitNow:');
  const fields: [string, string | undefined][] = [
    ['acquirer id', duitnow.acquirerId],
    ['merchant id', duitnow.merchantId],
    ['merchant name', duitnow.name],
    ['merchant city', duitnow.city],
    ['category code', duitnow.categoryCode ?? '8661 (default)'],
  ];
  for (const [name, value] of fields) print(`    ${`${name}:`.padEnd(15)} ${value ?? '-'}`);
}

withAgencyOptions(
  agency
    .command('add')
    .description('Create an agency with a new API key (shown once)')
    .argument('<code>', 'agency code, e.g. LZS', agencyCode)
    .requiredOption('--name <name>', 'display name'),
).action(async (code: string, opts: AgencyOptions & { name: string }) => {
  const { store, clock } = getDeps();
  const apiKey = randomUUID();
  const settings = settingsFrom(opts, DEFAULT_AGENCY_SETTINGS);
  if (!(await store.agencies.create({ code, name: opts.name, apiKey, settings, now: clock.now() }))) {
    throw new InvalidArgumentError(`agency ${code} exists; change it with: amil agency set ${code}`);
  }
  print(`Agency ${code} created.`);
  print(
    `API key: ${apiKey}\n(shown once: sign requests with it; rotate with amil agency rotate-key ${code})`,
  );
});

agency
  .command('list')
  .description('Every agency')
  .option('--json', 'machine-readable output')
  .action(async (opts: { json?: boolean }) => {
    const rows = await getDeps().store.agencies.list();
    if (opts.json) return printJson(rows);
    for (const row of rows)
      print(`${row.code.padEnd(8)} ${row.name}  (${row.settings.paymentCategories.length} categories)`);
    if (rows.length === 0) print('No agencies. Add one: amil agency add CODE --name NAME');
  });

agency
  .command('show')
  .description('One agency and its settings (never its API key)')
  .argument('<code>', 'agency code', agencyCode)
  .option('--json', 'machine-readable output')
  .action(async (code: string, opts: { json?: boolean }) => {
    const row = await getDeps().store.agencies.get(code);
    if (!row) throw new InvalidArgumentError(`no agency ${code}`);
    if (opts.json) printJson(row);
    else printAgency(row);
  });

agency
  .command('rotate-key')
  .description('Replace the API key now (the old one stops working); prints the new one once')
  .argument('<code>', 'agency code', agencyCode)
  .action(async (code: string) => {
    const { store, clock } = getDeps();
    const apiKey = randomUUID();
    if (!(await store.agencies.rotateKey(code, apiKey, clock.now())))
      throw new InvalidArgumentError(`no agency ${code}`);
    print(`Agency ${code}: API key rotated; the old key no longer works.`);
    print(`API key: ${apiKey}\n(shown once)`);
  });

withAgencyOptions(
  agency
    .command('set')
    .description('Change an agency; lists replace, add charges and DuitNow fields merge')
    .argument('<code>', 'agency code', agencyCode)
    .option('--name <name>', 'display name'),
).action(async (code: string, opts: AgencyOptions) => {
  const { store } = getDeps();
  const current = await store.agencies.get(code);
  if (!current) throw new InvalidArgumentError(`no agency ${code}`);
  await store.agencies.update(code, {
    ...(opts.name !== undefined && { name: opts.name }),
    settings: settingsFrom(opts, current.settings),
  });
  const row = await store.agencies.get(code);
  if (row) printAgency(row);
});

const callbacks = program
  .command('callbacks')
  .description('Direct callbacks to merchants and their deliveries');

callbacks
  .command('list')
  .description('List callbacks, newest first, with their last attempt')
  .option(
    '--failed',
    'only the failing: still retrying after a failed attempt, given up (dead), or refused by the merchant (410)',
  )
  .option('--limit <n>', 'how many', '50')
  .option('--json', 'machine-readable output, with every attempt')
  .action(async (opts: { failed?: boolean; limit: string; json?: boolean }) => {
    const limit = Number(opts.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      throw new InvalidArgumentError('--limit is a whole number from 1 to 10000');
    }
    const store = getDeps().store;
    const rows = await store.checkout.callbacks({ failed: opts.failed === true, limit });
    const withAttempts = await Promise.all(
      rows.map(async (r) => ({
        ...r,
        attempts: (await store.checkout.callbacksOf(r.orderNo)).find((c) => c.id === r.id)?.attemptLog ?? [],
      })),
    );
    if (opts.json) return printJson(withAttempts.map(({ fields: _fields, ...r }) => r));
    if (rows.length === 0) return print(opts.failed ? 'No failed callbacks.' : 'No callbacks.');
    for (const r of withAttempts) {
      const last = r.attempts.at(-1);
      const lastText = last ? `last ${last.at} ${last.statusCode ?? last.error ?? ''}` : 'not tried yet';
      // Queued after a failed attempt: failing now, and tried again at its next attempt.
      const retrying = r.state === 'queued' && r.attempts.length > 0;
      const state = retrying ? 'retrying' : r.state;
      const nextText = retrying && r.nextAttemptAt ? `, next ${r.nextAttemptAt}` : '';
      print(
        `${r.orderNo}  ${r.agencyCode.padEnd(5)} ${r.status.padEnd(8)} ${state.padEnd(10)} ${r.attempts.length} attempt(s), ${lastText}${nextText}`,
      );
      print(`  ${r.url}`);
    }
  });

callbacks
  .command('redeliver')
  .description("Send an order's latest callback again (a new callback; the old one keeps its history)")
  .argument('<orderNo>', 'service order number (fpx_seller_order_no)')
  .action(async (orderNo: string) => {
    const deps = getDeps();
    const id = await deps.store.checkout.redeliver(orderNo, deps.clock.now().toISOString());
    if (id === undefined) throw new CliError(`order ${orderNo} has no callback to send again`);
    print(
      `Callback ${id} of ${orderNo} queued; the pipeline delivers it (embedded: the web process; Redis: the workers).`,
    );
  });

const token = program.command('token').description('Report tokens (JWT) for the report API');

token
  .command('mint')
  .description('Mint a report token for one or more agencies; prints it once')
  .requiredOption('--agencies <codes>', 'agency codes, comma-separated, e.g. LZS,PPZ', (v) =>
    list(v).map(agencyCode),
  )
  .option('--ttl <duration>', 'lifetime: 90d, 12h, 30m or 3600s', '90d')
  .option('--label <label>', 'what the token is for, e.g. the merchant dashboard')
  .action(async (opts: { agencies: string[]; ttl: string; label?: string }) => {
    const { store, clock, config } = getDeps();
    const ttlSeconds = parseTtl(opts.ttl);
    if (ttlSeconds === undefined || ttlSeconds === 0)
      throw new InvalidArgumentError('--ttl looks like 90d, 12h, 30m or 3600s');
    for (const code of opts.agencies) {
      if (!(await store.agencies.get(code))) throw new InvalidArgumentError(`no agency ${code}`);
    }
    const minted = await mintReportToken(store, config.reportTokenSecret, {
      agencies: opts.agencies,
      ttlSeconds,
      now: clock.now(),
      ...(opts.label !== undefined && { label: opts.label }),
    });
    print(
      `Token ${minted.jti} for ${opts.agencies.join(', ')}, valid until ${minted.expiresAt.toISOString()}:`,
    );
    print(minted.token);
    print('(shown once; revoke with: amil token revoke ' + minted.jti + ')');
  });

token
  .command('revoke')
  .description('Revoke a report token by its id (jti)')
  .argument('<jti>', 'the token id printed by mint')
  .action(async (jti: string) => {
    const { store, clock } = getDeps();
    if (!(await store.reportTokens.revoke(jti, clock.now()))) throw new CliError(`no unrevoked token ${jti}`);
    print(`Token ${jti} revoked.`);
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
        // Handed over but not completed: in Redis, or lost with it and about to be re-added (docs/pipeline.md).
        const unfinished = outbox.reduce((n, q) => n + q.unfinished, 0);
        print(
          `outbox: ${waiting} job(s) waiting to be handed to Redis, ${unfinished} handed over and not yet done`,
        );
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

const day = (value: string): string => {
  if (!isCalendarDay(value))
    throw new InvalidArgumentError(`${value} is not a day that exists (YYYY-MM-DD, Asia/Kuala_Lumpur)`);
  return value;
};
/** A day already over in Kuala Lumpur: a workbook of a day still running would be mailed half-empty. */
const pastDay = (value: string): string => {
  const today = businessDate(systemClock.now());
  if (day(value) >= today)
    throw new InvalidArgumentError(
      `${value} is not over yet in Kuala Lumpur (today there is ${today}); the latest day to reconcile is ${prevDay(today)}`,
    );
  return value;
};
const sinkName = (sink: string) => (sink === TEST_SINK ? 'BANK-TEST' : sink);
const sinkOf = (value: string) => (value.toUpperCase() === 'BANK-TEST' ? TEST_SINK : value);

const recon = program
  .command('recon')
  .description('Nightly reconciliation workbooks: run a day by hand, list the runs');

recon
  .command('run')
  .description(
    'Build the workbooks of one business day now (every agency and the bank test report, or one), record ' +
      'the run, report what changed since the previous run of that day, and queue the e-mails (unless --no-mail)',
  )
  .requiredOption('--day <day>', 'a business day already over, YYYY-MM-DD (Asia/Kuala_Lumpur)', pastDay)
  .option('--agency <code>', 'one agency (or BANK-TEST for the bank live-test report)')
  .option('--no-mail', 'record the run without e-mailing the workbook')
  .action(async (opts: { day: string; agency?: string; mail: boolean }) => {
    const d = getDeps();
    const sinks = opts.agency ? [sinkOf(opts.agency)] : await reconSinks(d);
    for (const sink of sinks)
      if (sink !== TEST_SINK && !(await d.store.agencies.get(sink))) throw new CliError(`no agency ${sink}`);
    const asOf = await asOfNow(d);
    for (const sink of sinks) {
      const {
        run,
        summary,
        path: file,
        mailedTo,
      } = await runReconciliation(d, {
        sink,
        day: opts.day,
        trigger: 'manual',
        asOf,
        mail: opts.mail,
      });
      print(
        `run ${run.id} ${sinkName(sink)} ${opts.day}: ${summary.inputs.transactions} transaction(s), ` +
          `collected RM ${formatSen(summary.byStatus.success.sumSen)}, pending roll ${summary.pending.balances ? 'balances' : 'DOES NOT BALANCE'}`,
      );
      print(`  ${file}`);
      print(`  sha256 ${run.fileSha256}`);
      if (run.changes) print(`  ${run.changes.split('\n').join('\n  ')}`);
      print(`  ${mailText(sink, opts.mail, mailedTo)}`);
    }
  });

/** Whether a run was mailed: the e-mail is queued with the run and sent by the pipeline. */
function mailText(sink: string, mail: boolean, mailedTo: readonly string[]): string {
  if (!mail) return 'not mailed (--no-mail)';
  if (mailedTo.length > 0) return `e-mail queued to ${mailedTo.join(', ')}`;
  return sink === TEST_SINK
    ? 'not mailed: no recipients (BANK_TEST_RECIPIENTS)'
    : `not mailed: no recipients (amil agency set ${sink} --recipients ...)`;
}

recon
  .command('list')
  .description('Reconciliation runs, newest day first, with their e-mail deliveries')
  .option('--day <day>', 'only this business day', day)
  .option('--agency <code>', 'only this agency (or BANK-TEST)')
  .option('--limit <n>', 'at most this many', (v) => Number.parseInt(v, 10), 50)
  .option('--json', 'print JSON')
  .action(async (opts: { day?: string; agency?: string; limit: number; json?: boolean }) => {
    const { store } = getDeps();
    const runs = await store.reconRuns.list({
      sink: opts.agency ? sinkOf(opts.agency) : undefined,
      firstDay: opts.day,
      lastDay: opts.day,
      limit: opts.limit,
    });
    const withDeliveries = await Promise.all(
      runs.map(async (run) => ({
        ...run,
        emailQueued: await store.reconRuns.emailQueued(run.id),
        deliveries: await store.reconRuns.deliveries(run.id),
      })),
    );
    if (opts.json) return printJson(withDeliveries);
    for (const run of withDeliveries) {
      const sent = run.deliveries.find((x) => x.outcome === 'sent');
      const mail = sent
        ? `mailed ${sent.at}`
        : run.deliveries.length > 0
          ? `${run.deliveries.length} failed attempt(s)`
          : run.trigger === 'replay'
            ? 'replays are not mailed'
            : run.sink === TEST_SINK && getDeps().config.recon.bankTestRecipients.length === 0
              ? 'not mailed: no BANK_TEST_RECIPIENTS'
              : run.emailQueued
                ? 'not mailed yet'
                : 'not mailed: no e-mail queued (--no-mail, or no recipients)';
      print(`${run.id}\t${run.businessDate}\t${sinkName(run.sink)}\t${run.trigger}\t${run.file}\t${mail}`);
    }
  });

const instant = (value: string): Date => {
  const date = parseOffsetDateTime(value);
  if (!date) throw new InvalidArgumentError('an instant with its offset, e.g. 2026-11-21T00:30:00+08:00');
  return date;
};

program
  .command('export-day')
  .description(
    "Write what a replay of a business day needs as fixture files: the day's archived webhook bodies " +
      '(verbatim), excerpts of earlier bodies for the postings the day shows, and the checkout payments',
  )
  .requiredOption('--day <day>', 'business day, YYYY-MM-DD (Asia/Kuala_Lumpur)', day)
  .requiredOption('--out <dir>', 'directory to write (manifest.json, batches/, payments.json)')
  .option(
    '--as-of <instant>',
    "read as of this instant (default: the latest run of the day's, else now)",
    instant,
  )
  .action(async (opts: { day: string; out: string; asOf?: Date }) => {
    const d = getDeps();
    const asOf = opts.asOf ?? (await latestAsOf(d, opts.day)) ?? (await asOfNow(d));
    const manifest = await exportDay(d, opts.day, asOf, opts.out);
    print(
      `${opts.out}: ${manifest.batches.length} bodies (${manifest.batches.filter((b) => b.excerpt).length} excerpts), ` +
        `as of ${manifest.asOf}`,
    );
  });

program
  .command('replay')
  .description(
    'Run the whole pipeline on a day in an isolated store (ingest, normalise, fan-out, workbooks) and write ' +
      'its workbooks; --compare checks them cell by cell against the ones the original run emitted',
  )
  .requiredOption('--day <day>', 'business day, YYYY-MM-DD (Asia/Kuala_Lumpur)', day)
  .option(
    '--from <dir>',
    'an export-day directory, or a directory of webhook bodies (e.g. fixtures/days/2026-11-20)',
  )
  .option('--from-archive', "this store's archive (as of the day's latest run)")
  .requiredOption('--out <dir>', 'where to write the workbooks')
  .option('--as-of <instant>', 'read the day as of this instant', instant)
  .option('--agency <code>', 'one agency (or BANK-TEST)')
  .option('--compare [dir]', "compare with the workbooks in dir (default: this store's runs of the day)")
  .action(
    async (opts: {
      day: string;
      from?: string;
      fromArchive?: boolean;
      out: string;
      asOf?: Date;
      agency?: string;
      compare?: string | boolean;
    }) => {
      if (Boolean(opts.from) === Boolean(opts.fromArchive))
        throw new InvalidArgumentError('give --from <dir> or --from-archive');
      const d = getDeps();
      const agencies = (await d.store.agencies.list()).map((a) => ({
        code: a.code,
        name: a.name,
        settings: a.settings,
      }));
      let from = opts.from;
      let scratch: string | undefined;
      if (opts.fromArchive) {
        const asOf = opts.asOf ?? (await latestAsOf(d, opts.day)) ?? (await asOfNow(d));
        scratch = mkdtempSync(path.join(tmpdir(), 'amil-export-'));
        await exportDay(d, opts.day, asOf, scratch);
        from = scratch;
      }
      const archive = readDayDir(from!, opts.day, { asOf: opts.asOf, agencies });
      const bar = new SingleBar(
        { format: 'replay {bar} {value}/{total} {stage}', stream: process.stderr },
        Presets.shades_classic,
      );
      bar.start(archive.batches.length + 1, 0, { stage: 'ingest' });
      try {
        const results = await replayDay(d, archive, {
          outDir: opts.out,
          sinks: opts.agency ? [sinkOf(opts.agency)] : undefined,
          onProgress: (done, total) => bar.update(done, { stage: done < total ? 'ingest' : 'workbooks' }),
        });
        bar.stop();
        let differs = false;
        for (const { path: file, run } of results) {
          print(`${path.basename(file)}  sha256 ${run.fileSha256}`);
          if (opts.compare === undefined) continue;
          const original =
            typeof opts.compare === 'string'
              ? path.join(opts.compare, path.basename(file))
              : await originalOf(d, run.sink, opts.day, archive.asOf);
          if (!original || !existsSync(original)) {
            print('  no original workbook to compare with');
            differs = true;
            continue;
          }
          const diff = await compareWorkbooks(original, file, 50);
          if (diff.identical) print('  identical');
          else {
            differs = true;
            print(`  differs: ${diff.count} cell(s)`);
            for (const line of diff.lines) print(`    ${line}`);
          }
        }
        if (differs) process.exitCode = 2;
      } finally {
        bar.stop();
        if (scratch) rmSync(scratch, { recursive: true, force: true });
      }
    },
  );

/** The as-of time of the latest run of a day (any sink): what an export or replay reproduces by default. */
async function latestAsOf(d: Deps, forDay: string): Promise<Date | undefined> {
  const [run] = await d.store.reconRuns.list({ firstDay: forDay, lastDay: forDay, limit: 1 });
  return run && new Date(run.asOf);
}

/** The workbook a run of this store emitted for the sink's day as of that instant. */
async function originalOf(d: Deps, sink: string, forDay: string, asOf: Date): Promise<string | undefined> {
  const runs = await d.store.reconRuns.list({ sink, firstDay: forDay, lastDay: forDay, limit: 100 });
  const run = runs.find((r) => r.asOf === asOf.toISOString() && r.trigger !== 'replay');
  return run && path.resolve(d.config.dataDir, run.file);
}

/** The pipeline runtime this configuration uses, without running any job: to look and to retry. */
async function withRuntime(use: (runtime: PipelineRuntime) => Promise<void>): Promise<void> {
  const d = getDeps();
  const runtime = d.config.redisUrl
    ? createBullRuntime(d, { pollMs: 500, withWorkers: false })
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
  process.exitCode = reportError(err, (text) => process.stderr.write(text));
} finally {
  deps?.store.close();
}
