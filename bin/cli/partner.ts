/** `amil partner`: bank webhook partners and their X-API-Password. */
import { InvalidArgumentError, type Command } from 'commander';
import { generatePassword, hashPassword } from '../../core/passwords.ts';
import { CliError } from '../cli-errors.ts';
import type { CliContext } from './context.ts';

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

interface SetPasswordOptions {
  label?: string;
  passwordStdin?: boolean;
  revokeOthers?: boolean;
  new?: boolean;
}

/** Adds the `partner` commands. */
export function register(program: Command, cli: CliContext): void {
  const { print, printJson } = cli;
  const partner = program.command('partner').description('Bank webhook partners and their X-API-Password');

  partner
    .command('set-password')
    .description(
      'Add a password for a partner (a new one with --new). Earlier passwords stay valid until revoked, ' +
        'so the partner can switch without downtime. Prints a generated password once.',
    )
    .argument('<partner>', 'partner id, e.g. demo-bank', partnerId)
    .option('--label <label>', 'name of this password (default: the current UTC time)', label)
    .option('--password-stdin', 'read the password from standard input instead of generating one')
    .option('--revoke-others', 'revoke every other password of the partner at once')
    .option('--new', 'the partner does not exist yet: create it')
    .action(async (id: string, opts: SetPasswordOptions) => {
      const { store, clock } = cli.deps();
      // A postings' key is its partner's and its orderno: a typo'd partner would be a second bank, taking
      // the resent batches of the real one as new postings (counted twice), and revoking none of its passwords.
      const known = (await store.partners.list()).map((p) => p.id);
      if (!opts.new && !known.includes(id))
        throw new CliError(
          `no partner ${id} (partners: ${known.join(', ') || 'none'}); a new partner needs --new`,
        );
      if (opts.new && known.includes(id))
        throw new CliError(`partner ${id} exists: add a password to it without --new`);
      const now = clock.now();
      const password = opts.passwordStdin ? cli.readStdin().trim() : generatePassword();
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
      const { store, clock } = cli.deps();
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
      const partners = await cli.deps().store.partners.list();
      if (opts.json) return printJson(partners);
      if (partners.length === 0)
        return print('No partners. Add one: amil partner set-password <partner> --new');
      for (const p of partners) {
        print(`${p.id} (since ${p.createdAt})`);
        for (const pw of p.passwords) {
          print(
            `  ${pw.label.padEnd(24)} created ${pw.createdAt}  ${pw.revokedAt ? `revoked ${pw.revokedAt}` : 'ACTIVE'}`,
          );
        }
      }
    });
}
