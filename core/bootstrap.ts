import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createAcquirer } from './acquirer/index.ts';
import { createCallbackClient } from './outbound/callback-client.ts';
import { createMailer } from './outbound/mailer.ts';
import { createRateLimits } from './http/rate-limit.ts';
import { createQrRenderer } from './qr/renderer.ts';
import { createLogger } from './logger.ts';
import type { AgencySettings, DashboardRole, Store } from './store/index.ts';
import { openConfiguredStore } from './store/open.ts';
import { addDashboardUser } from './dashboard-accounts.ts';
import { systemClock } from './clock.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import type { Deps } from './deps.ts';
import { clockReadiness, createReadiness } from './readiness.ts';
import { createMetrics } from './metrics.ts';
import { configuredValidators } from './validators.ts';

/**
 * Builds the Deps of a process from the environment. Tests pass overrides (a temp DATA_DIR, a fixed
 * clock, a silent logger) and get the real thing otherwise.
 */
export function createDeps(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: Partial<Deps> = {},
): Deps {
  const config: Config = overrides.config ?? loadConfig(env);
  const store = overrides.store ?? openConfiguredStore(config);
  const clock = overrides.clock ?? systemClock;
  const readiness = overrides.readiness ?? createReadiness(store, clock);
  // Machines sharing a database must agree on the time (decision 259); SQLite is on this machine.
  if (config.databaseUrl && !overrides.readiness) readiness.add('clock', clockReadiness(store));
  const logger = overrides.logger ?? createLogger(config.logLevel);
  return {
    config,
    logger,
    store,
    clock,
    validators: overrides.validators ?? configuredValidators(Object.keys(config.webhook.routes)),
    acquirer:
      overrides.acquirer !== undefined
        ? overrides.acquirer
        : createAcquirer(config.checkout.acquirer, store, clock),
    callbacks:
      overrides.callbacks ??
      createCallbackClient({
        timeoutMs: config.callbacks.timeoutMs,
        allowedAddresses: config.callbacks.allowedAddresses,
      }),
    mailer: overrides.mailer ?? createMailer(config.mail),
    readiness,
    metrics: overrides.metrics ?? createMetrics({ store, clock, readiness }),
    // Both start nothing until first used: a process that never serves pages holds no thread or socket.
    limits: overrides.limits ?? createRateLimits(config, logger),
    qr: overrides.qr ?? createQrRenderer({ threads: config.qr.renderThreads, cacheBytes: QR_CACHE_BYTES }),
  };
}

interface DemoSeed {
  partners: { id: string; label: string; password: string }[];
  dashboardUsers: {
    email: string;
    name: string;
    password: string;
    agencies: Record<string, DashboardRole>;
  }[];
  agencies: { code: string; name: string; apiKey: string; settings: Partial<AgencySettings> }[];
}

/** Most bytes of rendered QR PNGs kept in memory (a 1024 px code is a few KiB). */
const QR_CACHE_BYTES = 32 * 1024 * 1024;

const DEMO_SEED_FILE = new URL('../fixtures/demo/seed.json', import.meta.url);

function readDemoSeed(): DemoSeed {
  return JSON.parse(readFileSync(DEMO_SEED_FILE, 'utf8')) as DemoSeed;
}

/**
 * Seeds the demo agencies, partner password and dashboard users (idempotent): a new user can post a batch
 * and sign in to the dashboard at once.
 */
export async function seedDemoData(store: Store, now: Date): Promise<void> {
  const seed = readDemoSeed();
  // Created once; an agency that exists (perhaps with a rotated key) is left as it is.
  for (const agency of seed.agencies) await store.agencies.create({ ...agency, now });
  for (const partner of seed.partners) {
    const has = async () =>
      (await store.partners.list()).some(
        (p) => p.id === partner.id && p.passwords.some((pw) => pw.label === partner.label),
      );
    await addUnlessThere(has, async () =>
      store.partners.addPassword({
        partnerId: partner.id,
        label: partner.label,
        hash: await hashPassword(partner.password),
        now,
      }),
    );
  }
  // Created once; a demo user changed since (password, roles, disabled) is left as it is.
  for (const user of seed.dashboardUsers) {
    await addUnlessThere(
      async () => (await store.dashboardUsers.byEmail(user.email)) !== undefined,
      () =>
        addDashboardUser(store, {
          ...user,
          memberships: Object.entries(user.agencies).map(([agency, role]) => ({ agency, role })),
          now,
        }),
    );
  }
}

/**
 * Adds a seeded thing unless it is there. Web processes started together (a development cluster on one
 * database) seed at the same moment: one that finds its insert refused because another process added the
 * thing meanwhile starts all the same, rather than exiting on the unique key.
 */
async function addUnlessThere(there: () => Promise<boolean>, add: () => Promise<unknown>): Promise<void> {
  if (await there()) return;
  try {
    await add();
  } catch (err) {
    if (!(await there())) throw err;
  }
}

/**
 * Binds a store to production (decision 293). A production process refuses it while a demo secret is valid
 * (decision 15), then marks it as production's; a process that is not in production (demo data seeded, the
 * sandbox acquirer, development defaults) refuses to start on a marked store. A second web machine or worker
 * whose environment left out NODE_ENV would otherwise seed the README's demo passwords into production's
 * data, take sandbox payments into it and ask the sandbox about real orders. The `amil` CLI, which neither
 * seeds nor pays, runs on any store.
 */
export async function claimStore(store: Store, config: Pick<Config, 'nodeEnv'>, now: Date): Promise<void> {
  if (config.nodeEnv === 'production') {
    await assertNoDemoSecrets(store);
    await store.ops.markProduction(now);
    return;
  }
  const marked = await store.ops.productionMark();
  if (marked === undefined) return;
  throw new ConfigError([
    `this store is production's (a production process opened it first at ${marked}): a process with ` +
      `NODE_ENV=${config.nodeEnv} would seed demo data and take sandbox payments into it; set NODE_ENV=production`,
  ]);
}

/** Refuses to run in production while any demo password or demo API key is still valid. */
export async function assertNoDemoSecrets(store: Store): Promise<void> {
  const seed = readDemoSeed();
  const demoPasswords = seed.partners.map((p) => p.password);
  for (const row of await store.partners.activePasswords()) {
    for (const demo of demoPasswords) {
      if (await verifyPassword(demo, row.hash)) {
        throw new Error(
          `Partner ${row.partnerId} still accepts the demo password (label "${row.label}"); ` +
            `revoke it with: amil partner revoke-password ${row.partnerId} --label ${row.label}`,
        );
      }
    }
  }
  for (const agency of seed.agencies) {
    if ((await store.agencies.apiKeyOf(agency.code)) === agency.apiKey) {
      throw new Error(
        `Agency ${agency.code} still has the demo API key; rotate it: amil agency rotate-key ${agency.code}`,
      );
    }
  }
  for (const demo of seed.dashboardUsers) {
    const user = await store.dashboardUsers.byEmail(demo.email);
    if (user && user.disabledAt === null && (await verifyPassword(demo.password, user.passwordHash))) {
      throw new Error(
        `Dashboard user ${demo.email} still has the demo password; disable it: amil user disable ${demo.email}`,
      );
    }
  }
}
