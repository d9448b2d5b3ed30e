/** `amil user`: the merchant dashboard's users, their agencies and roles, passwords and second factor. */
import { InvalidArgumentError, type Command } from 'commander';
import { addDashboardUser, emailProblem, passwordProblem } from '../../core/dashboard-accounts.ts';
import { generatePassword, hashPassword } from '../../core/passwords.ts';
import type { DashboardRole, DashboardUser } from '../../core/store/index.ts';
import { newTotpSecret } from '../../core/totp.ts';
import { CliError } from '../cli-errors.ts';
import { agencyCode, list } from './args.ts';
import type { CliContext } from './context.ts';

const email = (value: string): string => {
  const problem = emailProblem(value.trim().toLowerCase());
  if (problem) throw new InvalidArgumentError(problem);
  return value.trim().toLowerCase();
};

/** `LZS=admin,PPZ=viewer` (repeatable): the roles given. */
const roles = (
  value: string,
  previous: { agency: string; role: DashboardRole }[] = [],
): { agency: string; role: DashboardRole }[] => [
  ...previous,
  ...list(value).map((entry): { agency: string; role: DashboardRole } => {
    const [code = '', role = ''] = entry.split('=');
    if (role !== 'admin' && role !== 'viewer')
      throw new InvalidArgumentError('use AGENCY=admin or AGENCY=viewer, e.g. LZS=admin');
    return { agency: agencyCode(code), role };
  }),
];

const onOff = (value: string): boolean => {
  if (value !== 'on' && value !== 'off') throw new InvalidArgumentError('on or off');
  return value === 'on';
};

function describe(user: DashboardUser): string {
  const agencies = user.memberships.map((m) => `${m.agency}=${m.role}`).join(',') || '(no agency)';
  const flags = [user.totp ? 'totp' : '', user.disabledAt ? `DISABLED ${user.disabledAt}` : '']
    .filter(Boolean)
    .join(' ');
  return `${user.email.padEnd(32)} ${agencies.padEnd(24)} ${user.name}${flags ? `  [${flags}]` : ''}`;
}

/** Adds the `user` commands. */
export function register(program: Command, cli: CliContext): void {
  const { print, printJson } = cli;
  const user = program
    .command('user')
    .description('Merchant dashboard users: agencies and roles (viewer, admin), passwords, TOTP');

  /** The user of an e-mail address, or a refusal naming it. */
  const find = async (address: string): Promise<DashboardUser> => {
    const found = await cli.deps().store.dashboardUsers.byEmail(address);
    if (!found) throw new CliError(`no dashboard user ${address}`);
    const { passwordHash: _hash, totpSecret: _secret, ...shown } = found;
    return shown;
  };
  const password = (fromStdin: boolean | undefined): string => {
    const value = fromStdin ? cli.readStdin().trim() : generatePassword();
    const problem = passwordProblem(value);
    if (problem) throw new InvalidArgumentError(problem);
    return value;
  };

  user
    .command('add')
    .description('Create a dashboard user; prints a generated password once')
    .argument('<email>', 'the e-mail address they sign in with', email)
    .requiredOption('--agency <roles>', 'agencies and roles: LZS=admin,PPZ=viewer (repeatable)', roles)
    .option('--name <name>', 'the name shown on the dashboard (default: the e-mail address)')
    .option('--password-stdin', 'read the password from standard input instead of generating one')
    .action(
      async (
        address: string,
        opts: { agency: { agency: string; role: DashboardRole }[]; name?: string; passwordStdin?: boolean },
      ) => {
        const { store, clock } = cli.deps();
        const chosen = password(opts.passwordStdin);
        for (const m of opts.agency)
          if (!(await store.agencies.get(m.agency))) throw new CliError(`no agency ${m.agency}`);
        if (await store.dashboardUsers.byEmail(address))
          throw new CliError(`a dashboard user ${address} exists; change it with: amil user set ${address}`);
        const { user: created } = await addDashboardUser(store, {
          email: address,
          name: opts.name ?? address,
          password: chosen,
          memberships: opts.agency,
          now: clock.now(),
        });
        print(`Dashboard user ${created.email} created: ${describe(created).trim()}`);
        if (!opts.passwordStdin) print(`Password: ${chosen}\n(shown once; only its hash is stored)`);
      },
    );

  user
    .command('list')
    .description('Every dashboard user, their agencies and roles (never a password)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const users = await cli.deps().store.dashboardUsers.list();
      if (opts.json) return printJson(users);
      if (users.length === 0)
        return print('No dashboard users. Add one: amil user add EMAIL --agency LZS=admin');
      for (const u of users) print(describe(u));
    });

  user
    .command('set')
    .description('Change a user: name, agencies and roles, enable, TOTP (on prints its URL once)')
    .argument('<email>', 'the user', email)
    .option('--name <name>', 'the name shown on the dashboard')
    .option('--agency <roles>', 'add or change roles: LZS=admin,PPZ=viewer (repeatable)', roles)
    .option('--remove-agency <codes>', 'take agencies away, comma-separated', (v) => list(v).map(agencyCode))
    .option('--enable', 'enable a disabled user')
    .option('--totp <on|off>', 'the TOTP second factor; on prints the otpauth URL once', onOff)
    .action(
      async (
        address: string,
        opts: {
          name?: string;
          agency?: { agency: string; role: DashboardRole }[];
          removeAgency?: string[];
          enable?: boolean;
          totp?: boolean;
        },
      ) => {
        const { store, clock } = cli.deps();
        const found = await find(address);
        for (const m of opts.agency ?? [])
          if (!(await store.agencies.get(m.agency))) throw new CliError(`no agency ${m.agency}`);
        await store.dashboardUsers.update(found.id, {
          ...(opts.name !== undefined && { name: opts.name }),
          memberships: [
            ...(opts.agency ?? []),
            ...(opts.removeAgency ?? []).map((agency) => ({ agency, role: null })),
          ],
        });
        if (opts.enable) await store.dashboardUsers.setDisabled(found.id, false, clock.now());
        let otpauth: string | undefined;
        if (opts.totp === true) {
          const { secret, url } = newTotpSecret(found.email);
          await store.dashboardUsers.setTotp(found.id, secret);
          otpauth = url;
        } else if (opts.totp === false) {
          await store.dashboardUsers.setTotp(found.id, null);
        }
        print(describe(await find(address)));
        if (otpauth)
          print(
            `TOTP on. Add this to the user's authenticator app (shown once; turning TOTP on again replaces it):\n${otpauth}`,
          );
      },
    );

  user
    .command('disable')
    .description(
      'Disable a user now: every session ends and sign-in is refused (amil user set --enable undoes it)',
    )
    .argument('<email>', 'the user', email)
    .action(async (address: string) => {
      const { store, clock } = cli.deps();
      await store.dashboardUsers.setDisabled((await find(address)).id, true, clock.now());
      print(`Dashboard user ${address} disabled; their sessions ended.`);
    });

  user
    .command('reset-password')
    .description("Replace a user's password; every session ends. Prints a generated password once")
    .argument('<email>', 'the user', email)
    .option('--password-stdin', 'read the password from standard input instead of generating one')
    .action(async (address: string, opts: { passwordStdin?: boolean }) => {
      const { store, clock } = cli.deps();
      const found = await find(address);
      const chosen = password(opts.passwordStdin);
      await store.dashboardUsers.setPassword(found.id, await hashPassword(chosen), clock.now());
      print(`Dashboard user ${address}: password replaced; their sessions ended.`);
      if (!opts.passwordStdin) print(`Password: ${chosen}\n(shown once; only its hash is stored)`);
    });
}
