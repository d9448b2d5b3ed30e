/** `amil agency`: agencies (tenants) and their API keys and settings. */
import { randomUUID } from 'node:crypto';
import { InvalidArgumentError, type Command } from 'commander';
import { rotateApiKey } from '../../core/agency-admin.ts';
import { formatSen } from '../../core/money.ts';
import {
  DEFAULT_AGENCY_SETTINGS,
  type AddChargeRule,
  type AgencyRow,
  type AgencySettings,
} from '../../core/store/index.ts';
import { agencyCode } from './args.ts';
import { settingsFrom, withAgencyOptions, type AgencyOptions } from './agency-options.ts';
import type { CliContext } from './context.ts';

/** Adds the `agency` commands. */
export function register(program: Command, cli: CliContext): void {
  const { print, printJson } = cli;
  const agency = program
    .command('agency')
    .description(
      'Agencies (tenants): API keys, categories, add charges, recipients, callback hosts, DuitNow',
    );

  withAgencyOptions(
    agency
      .command('add')
      .description('Create an agency with a new API key (shown once)')
      .argument('<code>', 'agency code, e.g. LZS', agencyCode)
      .requiredOption('--name <name>', 'display name'),
  ).action(async (code: string, opts: AgencyOptions & { name: string }) => {
    const { store, clock } = cli.deps();
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
      const rows = await cli.deps().store.agencies.list();
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
      const row = await cli.deps().store.agencies.get(code);
      if (!row) throw new InvalidArgumentError(`no agency ${code}`);
      if (opts.json) printJson(row);
      else printAgency(print, row);
    });

  agency
    .command('rotate-key')
    .description('Replace the API key now (the old one stops working); prints the new one once')
    .argument('<code>', 'agency code', agencyCode)
    .action(async (code: string) => {
      const { store, clock } = cli.deps();
      const apiKey = await rotateApiKey(store, code, clock.now());
      if (apiKey === undefined) throw new InvalidArgumentError(`no agency ${code}`);
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
    const { store } = cli.deps();
    const current = await store.agencies.get(code);
    if (!current) throw new InvalidArgumentError(`no agency ${code}`);
    await store.agencies.update(code, {
      ...(opts.name !== undefined && { name: opts.name }),
      settings: settingsFrom(opts, current.settings),
    });
    const row = await store.agencies.get(code);
    if (row) printAgency(print, row);
  });
}

function printAgency(print: CliContext['print'], row: AgencyRow): void {
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
  printDuitNow(print, row.code, s.duitnow);
  print(`  accepts unsigned orders: ${s.acceptUnsignedOrders ? 'yes' : 'no'}`);
  print(`  logo: ${s.logo ? `${s.logo.type}, ${Buffer.from(s.logo.base64, 'base64').length} bytes` : '-'}`);
}

/** The DuitNow settings, one field a line, named as the `--duitnow-*` options set them. */
function printDuitNow(print: CliContext['print'], code: string, duitnow: AgencySettings['duitnow']): void {
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
