/** `amil token`: report tokens (JWT) for the report API. */
import { InvalidArgumentError, type Command } from 'commander';
import { mintReportToken, parseTtl } from '../../core/report-tokens.ts';
import { CliError } from '../cli-errors.ts';
import { agencyCode, list } from './args.ts';
import type { CliContext } from './context.ts';

/** Adds the `token` commands. */
export function register(program: Command, cli: CliContext): void {
  const { print } = cli;
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
      const { store, clock, config } = cli.deps();
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
      const { store, clock } = cli.deps();
      if (!(await store.reportTokens.revoke(jti, clock.now())))
        throw new CliError(`no unrevoked token ${jti}`);
      print(`Token ${jti} revoked.`);
    });
}
