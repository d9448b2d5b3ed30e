/**
 * The production guards: what a production deployment must set, and the demo values and sandbox it must
 * refuse. The table (variables.ts) names the guards of each variable; the loader runs them after every
 * value is read, on the values that parsed.
 */
import type { ProductionRule, Variable } from './variable.ts';

/** The demo admin password, printed in the README: fine on a laptop's loopback, refused anywhere else. */
export const DEMO_ADMIN_PASSWORD = 'demo-admin-password';
/** The demo report-token secret: printed here, so refused in production. */
export const DEMO_REPORT_TOKEN_SECRET = 'demo-report-token-secret-not-for-production';
/** The demo pay-link secret: printed here, so refused in production. */
export const DEMO_PAY_LINK_SECRET = 'demo-pay-link-secret-not-for-production';

/** Whether HOST listens on loopback only, where the demo admin password may stay. */
export function isLoopback(host: string): boolean {
  return /^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(host);
}

/**
 * Required in production. Public origins are: the listening address is rarely what payers' phones reach.
 */
export function requiredInProduction(hint = ''): ProductionRule<unknown> {
  return (_value, { name, set }, ctx) =>
    ctx.production && !set ? `${name} is required in production${hint}` : undefined;
}

/** A demo secret, printed in the code, is refused in production. */
export function notTheDemoSecret(demo: string): ProductionRule<string> {
  return (value, { name, set }, ctx) =>
    ctx.production && set && value === demo ? `${name} must not be the demo secret in production` : undefined;
}

/** Demo data is never seeded in production. */
export const noDemoSeeding: ProductionRule<boolean> = (value, { name }, ctx) =>
  ctx.production && value ? `${name} must not be true when NODE_ENV=production` : undefined;

/** The demo admin password is refused in production and on any HOST reachable from elsewhere. */
export function demoPasswordOnLoopbackOnly(host: Variable<string>): ProductionRule<string | undefined> {
  return (value, { name, set }, ctx) =>
    set && value === DEMO_ADMIN_PASSWORD && (ctx.production || !isLoopback(ctx.get(host)))
      ? `${name} must not be the demo password in production or on a non-loopback HOST`
      : undefined;
}

/** The sandbox approves payments without moving money: production keeps it only when it says it is staging. */
export function sandboxOnlyInStaging(staging: Variable<boolean>): ProductionRule<string> {
  return (value, { name }, ctx) =>
    value === 'sandbox' && ctx.production && !ctx.get(staging)
      ? `${name}=sandbox approves payments without moving money: refused when NODE_ENV=production ` +
        '(a staging deployment says so with STAGING=true)'
      : undefined;
}
