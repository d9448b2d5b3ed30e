import { availableParallelism } from 'node:os';
import path from 'node:path';
import { ringgitStringToSen } from './money.ts';
import cronParser from 'cron-parser';
import { BUSINESS_TIMEZONE } from './time.ts';

/** The three hosts of the interface; one process serves all of them. */
export const HOSTS = ['base', 'reports', 'pay'] as const;
export type HostName = (typeof HOSTS)[number];

/** Where a bank agency code routes: a zakat agency's code, or the live-test sink. */
export type BankRoute = { kind: 'agency'; agency: string } | { kind: 'test' };

export interface Config {
  readonly nodeEnv: 'development' | 'test' | 'production';
  readonly host: string;
  /** Port serving every host that has no port of its own. */
  readonly port: number;
  /** Hosts given a port of their own (`BASE_PORT`, `REPORTS_PORT`, `PAY_PORT`). */
  readonly hostPorts: Readonly<Partial<Record<HostName, number>>>;
  readonly dataDir: string;
  readonly databaseFile: string;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly seedDemo: boolean;
  readonly trustProxy: boolean;
  readonly shutdownGraceMs: number;
  /** Redis for BullMQ; undefined runs the pipeline in-process (embedded mode). */
  readonly redisUrl: string | undefined;
  /** Key prefix of every BullMQ queue, so several deployments (or tests) can share one Redis. */
  readonly queuePrefix: string;
  /** Password of the `admin` user of the admin pages (Bull Board) and GET /metrics; undefined disables them. */
  readonly adminPassword: string | undefined;
  /** Whether Bull Board may retry, promote or remove jobs (default: look only). */
  readonly queueBoardWritable: boolean;
  /** How pipeline jobs retry, and how the workers keep the outbox and Redis in step (docs/pipeline.md). */
  readonly pipeline: {
    /** First retry delay; doubled per attempt up to `retryMaxMs`, with jitter. */
    readonly retryBaseMs: number;
    readonly retryMaxMs: number;
    /** Per job (normalise, ledger, callback, recon-nightly, recon-email, receipt): how long a job keeps retrying. */
    readonly retryHorizonMs: Readonly<Record<PipelineJobName, number>>;
    /** How often a worker compares the outbox with Redis and re-asserts the nightly scheduler. */
    readonly reconcileMs: number;
    /** A row handed to Redis and not done for this long is looked for in Redis. */
    readonly reconcileGraceMs: number;
    /** BullMQ lock of a job in flight: a killed worker's job is handed back this long after. */
    readonly workerLockMs: number;
    /** Embedded mode: longest pause of the relay while the store cannot write. */
    readonly storeFaultMaxMs: number;
    /** Embedded mode: a store that cannot write is logged at most once per this interval. */
    readonly storeFaultLogMs: number;
  };
  /** HMAC secret of the report tokens (JWT, HS256). */
  readonly reportTokenSecret: string;
  /** Public origins (scheme://host[:port], no path) of the hosts, for absolute URLs in QR codes. */
  readonly publicUrls: { readonly base: string; readonly reports: string };
  /** HMAC secret of the service's own pay-link signatures (signed QR codes). */
  readonly payLinkSecret: string;
  readonly qr: {
    /** How long a generated QR code's PNG URL serves, in days. */
    readonly pngTtlDays: number;
    /** Worker threads that draw QR PNGs, off the event loop. */
    readonly renderThreads: number;
  };
  /** Per-client limits (by `ctx.ip`), shared through Redis when REDIS_URL is set; 0 means no limit. */
  readonly rateLimits: {
    /** Anonymous page requests per client per minute: pay page, checkout pages, /qr2/, sandbox bank. */
    readonly pagesPerMinute: number;
    /** Orders a client may open per minute through the anonymous pay page (`POST /pay/...`). */
    readonly ordersPerMinute: number;
    /** Wrong `X-API-Password` values a client may send per window before it gets 429. */
    readonly partnerAuthFailures: number;
    readonly partnerAuthWindowSeconds: number;
  };
  readonly webhook: {
    readonly maxBodyBytes: number;
    readonly maxRecords: number;
    /** Bank agency code -> route, e.g. BANKLZS -> agency LZS, BANK -> test sink. */
    readonly routes: Readonly<Record<string, BankRoute>>;
    /** How far before its batch's receipt a record's `time` may be (a resend of old postings). */
    readonly timePastDays: number;
    /** How far after its batch's receipt a record's `time` may be (clock skew). */
    readonly timeFutureMinutes: number;
  };
  readonly checkout: {
    /**
     * Where payments go: the sandbox (simulated banks, no money moves) or none (checkout, pay pages and
     * pay-link QR codes answer that payments are not configured). docs/acquirers.md adds a real one.
     */
    readonly acquirer: AcquirerName;
    /** A production deployment that is a staging one: only then may it use the sandbox. */
    readonly staging: boolean;
    /** An order nobody took to the bank expires (failed, code `XA`) this long after it was made. */
    readonly unpaidExpiryMs: number;
    /** Largest order amount in sen (default the FPX B2C limit, RM 30,000.00). */
    readonly maxAmountSen: number;
    /** How often pending payments are enquired at their acquirer. */
    readonly enquiryIntervalMs: number;
    /** A payment still pending this long after its order was made becomes failed (code `XP`). */
    readonly pendingExpiryMs: number;
  };
  readonly callbacks: {
    readonly timeoutMs: number;
    /** Retry interval (with jitter) during the fast phase. */
    readonly retryMs: number;
    /** How long the fast phase lasts from the first attempt; then the interval doubles per attempt. */
    readonly fastPhaseMs: number;
    /** Longest interval of the backing-off phase. */
    readonly maxIntervalMs: number;
    /** From the first attempt, when a callback is given up (dead letter). */
    readonly giveUpMs: number;
    /** Addresses (IPs or CIDRs) callbacks may reach although private or loopback. */
    readonly allowedAddresses: readonly string[];
  };
  readonly recon: {
    /** When the nightly run starts (cron, Asia/Kuala_Lumpur); it reconciles the day before. */
    readonly cron: string;
    /** Where workbooks are written (under DATA_DIR). */
    readonly dir: string;
    /** Recipients of the bank's live-test report (the agencies' recipients are agency settings). */
    readonly bankTestRecipients: readonly string[];
  };
  readonly mail: {
    /** SMTP server (smtp:// or smtps://); undefined writes each e-mail as an .eml file under `dir`. */
    readonly smtpUrl: string | undefined;
    readonly from: string;
    /** Sender of payers' receipts (default `from`). */
    readonly receiptFrom: string;
    readonly dir: string;
  };
}

/** The acquirers amil can send payments to (docs/acquirers.md). */
export const ACQUIRERS = ['sandbox', 'none'] as const;
export type AcquirerName = (typeof ACQUIRERS)[number];
/** The pipeline's jobs, as PIPELINE_RETRY_HORIZONS names them. */
export const PIPELINE_JOB_NAMES = [
  'normalise',
  'ledger',
  'callback',
  'recon-nightly',
  'recon-email',
  'receipt',
] as const;
export type PipelineJobName = (typeof PIPELINE_JOB_NAMES)[number];

/** One documented environment variable: the README's configuration table is checked against this list. */
export interface EnvVar {
  name: string;
  default: string;
  meaning: string;
}

export const ENV_VARS: readonly EnvVar[] = [
  { name: 'NODE_ENV', default: 'development', meaning: '`production` refuses demo data and demo secrets' },
  { name: 'HOST', default: '127.0.0.1', meaning: 'Interface the web process listens on' },
  { name: 'PORT', default: '3000', meaning: 'Port serving every host that has no port of its own' },
  { name: 'BASE_PORT', default: '(unset)', meaning: 'Serve the checkout host `{base_url}` on its own port' },
  {
    name: 'REPORTS_PORT',
    default: '(unset)',
    meaning: 'Serve the reports host `{reports_url}` on its own port',
  },
  {
    name: 'PAY_PORT',
    default: '(unset)',
    meaning: 'Serve the bank webhook host `{pay_url}` on its own port',
  },
  { name: 'DATA_DIR', default: './data', meaning: 'Directory of the SQLite database (`amil.db`)' },
  {
    name: 'LOG_LEVEL',
    default: 'info',
    meaning: 'pino level: fatal, error, warn, info, debug, trace, silent',
  },
  {
    name: 'SEED_DEMO',
    default: 'true (false in production)',
    meaning: 'Seed the demo agencies and partner password from `fixtures/demo/` at start-up',
  },
  {
    name: 'TRUST_PROXY',
    default: 'false',
    meaning: 'Trust `X-Forwarded-*` headers (set when behind a reverse proxy)',
  },
  {
    name: 'SHUTDOWN_GRACE_MS',
    default: '10000',
    meaning: 'On SIGTERM/SIGINT, how long in-flight requests may finish before connections are cut',
  },
  {
    name: 'REDIS_URL',
    default: '(unset)',
    meaning:
      'Redis for the BullMQ pipeline (`redis://host:6379`); unset runs the pipeline inside the web process (embedded mode)',
  },
  { name: 'QUEUE_PREFIX', default: 'amil', meaning: 'Key prefix of the BullMQ queues in Redis' },
  {
    name: 'PIPELINE_RETRY_BASE_MS',
    default: '1000',
    meaning: 'First retry delay of a failed pipeline job; doubled per attempt up to PIPELINE_RETRY_MAX_MS',
  },
  {
    name: 'PIPELINE_RETRY_MAX_MS',
    default: '300000',
    meaning: 'Longest delay (5 min) between two attempts of a pipeline job',
  },
  {
    name: 'PIPELINE_RETRY_HORIZON_MS',
    default: '21600000',
    meaning:
      'How long (6 h) a failing pipeline job keeps retrying before it shows as failed; it is still re-driven every PIPELINE_RETRY_MAX_MS',
  },
  {
    name: 'PIPELINE_RETRY_HORIZONS',
    default: 'recon-nightly=86400000,recon-email=86400000,receipt=86400000',
    meaning:
      'Per-job horizons in ms overriding PIPELINE_RETRY_HORIZON_MS (`job=ms`, comma-separated; jobs: normalise, ledger, callback, recon-nightly, recon-email, receipt)',
  },
  {
    name: 'PIPELINE_RECONCILE_MS',
    default: '60000',
    meaning:
      'Redis mode: how often a worker re-adds outbox jobs Redis no longer holds and re-asserts the nightly scheduler',
  },
  {
    name: 'PIPELINE_RECONCILE_GRACE_MS',
    default: '60000',
    meaning: 'Redis mode: an outbox row handed to Redis and not done for this long is looked for in Redis',
  },
  {
    name: 'WORKER_LOCK_MS',
    default: '60000',
    meaning: "Redis mode: lock of a job in flight; a killed worker's job is handed back this long after",
  },
  {
    name: 'STORE_FAULT_MAX_MS',
    default: '30000',
    meaning:
      'Embedded mode: longest pause of the pipeline while the database cannot write (full disk); it backs off up to this',
  },
  {
    name: 'STORE_FAULT_LOG_MS',
    default: '60000',
    meaning: 'Embedded mode: a database that cannot write is logged once per this interval, not per attempt',
  },
  {
    name: 'ADMIN_PASSWORD',
    default: 'demo-admin-password (unset in production or on a non-loopback HOST)',
    meaning:
      'Password of user `admin` for the admin pages (`/admin/queues`, Redis mode) and `/metrics`; unset disables them',
  },
  {
    name: 'REPORT_TOKEN_SECRET',
    default: 'a demo secret (required in production)',
    meaning:
      'Secret that signs report tokens (JWT, HS256), at least 32 characters; changing it voids every token',
  },
  {
    name: 'PUBLIC_BASE_URL',
    default: 'http://127.0.0.1:{BASE_PORT or PORT} (required in production)',
    meaning:
      'Public origin of the checkout host `{base_url}` (`https://host[:port]`, no path): pay links and QR codes point here',
  },
  {
    name: 'PUBLIC_REPORTS_URL',
    default: 'http://127.0.0.1:{REPORTS_PORT or PORT} (required in production)',
    meaning:
      'Public origin of the reports host `{reports_url}`: the PNG URLs of generated QR codes point here',
  },
  {
    name: 'PAY_LINK_SECRET',
    default: 'a demo secret (required in production)',
    meaning:
      'Secret that signs the pay links of signed QR codes, at least 32 characters; changing it voids every signed QR code',
  },
  {
    name: 'QR_PNG_TTL_DAYS',
    default: '90',
    meaning:
      'Days the PNG URL of a generated QR code is served (then 410); the pay link inside never expires',
  },
  {
    name: 'QR_RENDER_THREADS',
    default: 'cores - 1, 1 to 4',
    meaning: 'Worker threads that draw QR code PNGs (off the event loop); rendered PNGs are also cached',
  },
  {
    name: 'RATE_LIMIT_PAGES_PER_MINUTE',
    default: '300 (100000 when NODE_ENV=test)',
    meaning:
      'Requests per client IP per minute to the anonymous pages (pay page, checkout pages, `/qr2/`, sandbox bank); more get 429 with `Retry-After`; 0 = no limit',
  },
  {
    name: 'RATE_LIMIT_ORDERS_PER_MINUTE',
    default: '30 (100000 when NODE_ENV=test)',
    meaning:
      'Orders per client IP per minute opened through the anonymous pay page (`POST /pay/...`); more get 429; 0 = no limit',
  },
  {
    name: 'PARTNER_AUTH_MAX_FAILURES',
    default: '10 (100000 when NODE_ENV=test)',
    meaning:
      'Wrong `X-API-Password` values per client IP per window; more get 429 with `Retry-After` before any password check; 0 = no limit',
  },
  {
    name: 'PARTNER_AUTH_WINDOW_SECONDS',
    default: '900',
    meaning: 'The window of PARTNER_AUTH_MAX_FAILURES, in seconds',
  },
  {
    name: 'QUEUE_BOARD_WRITABLE',
    default: 'false',
    meaning: 'Let Bull Board retry, promote and remove jobs; by default it only shows them',
  },
  {
    name: 'WEBHOOK_MAX_BODY_BYTES',
    default: '5242880',
    meaning: 'Largest bank webhook body accepted (5 MiB); larger gets 413',
  },
  {
    name: 'WEBHOOK_MAX_RECORDS',
    default: '5000',
    meaning: 'Most records in one webhook batch; more gets 413',
  },
  {
    name: 'WEBHOOK_TIME_PAST_DAYS',
    default: '400 (3650 when NODE_ENV=test)',
    meaning: 'A record `time` more days than this before its batch arrived is refused (422); 1 to 3650',
  },
  {
    name: 'WEBHOOK_TIME_SKEW_MINUTES',
    default: '10',
    meaning: 'A record `time` more minutes than this after its batch arrived is refused (422); 0 to 1440',
  },
  {
    name: 'CHECKOUT_MAX_AMOUNT',
    default: '30000.00',
    meaning: 'Largest checkout `amount` in ringgit (the FPX B2C limit); larger is refused',
  },
  {
    name: 'ACQUIRER',
    default: 'sandbox (none in production)',
    meaning:
      'Where payments go: `sandbox` (simulated banks, no money moves) or `none` (payments not configured); see docs/acquirers.md',
  },
  {
    name: 'STAGING',
    default: 'false',
    meaning:
      'A production deployment that is a staging one: only then may `ACQUIRER=sandbox` run with NODE_ENV=production',
  },
  {
    name: 'UNPAID_ORDER_EXPIRY_MS',
    default: '3600000',
    meaning: 'An order nobody took to the bank this long (1 h) after it was made becomes `failed`, code `XA`',
  },
  {
    name: 'PENDING_ENQUIRY_MS',
    default: '60000',
    meaning: 'How often pending payments are enquired at their acquirer',
  },
  {
    name: 'PENDING_EXPIRY_MS',
    default: '7200000',
    meaning: 'A payment still pending this long (2 h) after its order becomes `failed`, code `XP`',
  },
  { name: 'CALLBACK_TIMEOUT_MS', default: '15000', meaning: 'Timeout of one callback delivery attempt' },
  {
    name: 'CALLBACK_RETRY_MS',
    default: '30000',
    meaning: 'Callback retry interval (plus or minus 20% jitter) during the first hour',
  },
  {
    name: 'CALLBACK_FAST_PHASE_MS',
    default: '3600000',
    meaning: 'How long callbacks retry at CALLBACK_RETRY_MS; then the interval doubles per attempt',
  },
  {
    name: 'CALLBACK_MAX_INTERVAL_MS',
    default: '3600000',
    meaning: 'Longest interval between callback attempts after the first hour',
  },
  {
    name: 'CALLBACK_GIVE_UP_MS',
    default: '259200000',
    meaning:
      'A callback not acknowledged within this time (3 days) from its first attempt is given up (dead)',
  },
  {
    name: 'CALLBACK_ALLOWED_ADDRESSES',
    default: '127.0.0.1,::1 (none in production)',
    meaning:
      'Private or loopback addresses (IPs or CIDRs, comma-separated) callbacks may reach; all others of those ranges are refused',
  },
  {
    name: 'RECON_CRON',
    default: '30 0 * * *',
    meaning:
      'When the nightly reconciliation runs (cron, in Asia/Kuala_Lumpur time); it builds the workbooks of the day before',
  },
  {
    name: 'BANK_TEST_RECIPIENTS',
    default: '(none)',
    meaning: "E-mail addresses (comma-separated) that receive the bank's live-test report each night",
  },
  {
    name: 'SMTP_URL',
    default: '(unset: .eml files)',
    meaning:
      "SMTP server for the nightly e-mails and payers' receipts, e.g. `smtp://user:pass@mail.example:587`; unset writes each e-mail to `DATA_DIR/mail/*.eml`",
  },
  {
    name: 'MAIL_FROM',
    default: 'amil <reconciliation@amil.invalid>',
    meaning: 'Sender of the nightly e-mails',
  },
  {
    name: 'RECEIPT_MAIL_FROM',
    default: 'MAIL_FROM',
    meaning: "Sender of payers' receipts (`Name <address>`), e.g. the agency's own `resit@...` address",
  },
  {
    name: 'BANK_AGENCY_ROUTES',
    default: 'BANKLZS=LZS,BANKPPZ=PPZ,BANK=test',
    meaning:
      'Accepted bank agency codes and where each routes: a zakat agency code, or `test` for live-test entries',
  },
];

/** Raised with every problem found, so an operator fixes them all in one go. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** Reads, validates and freezes the configuration. Throws ConfigError listing every problem. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };

  const int = (name: string, fallback: number | undefined, min: number, max: number): number | undefined => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  };

  const bool = (name: string, fallback: boolean): boolean => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
    if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };

  const nodeEnvRaw = read('NODE_ENV') ?? 'development';
  let nodeEnv: Config['nodeEnv'] = 'development';
  if (nodeEnvRaw === 'development' || nodeEnvRaw === 'test' || nodeEnvRaw === 'production')
    nodeEnv = nodeEnvRaw;
  else problems.push(`NODE_ENV must be development, test or production (got "${nodeEnvRaw}")`);
  const production = nodeEnv === 'production';
  const testing = nodeEnv === 'test';
  // One core is left to the event loop; more than four threads buys nothing for PNGs of this size.
  const defaultRenderThreads = Math.max(1, Math.min(4, availableParallelism() - 1));

  const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
  const logLevelRaw = read('LOG_LEVEL') ?? 'info';
  const logLevel = logLevels.find((l) => l === logLevelRaw);
  if (!logLevel) problems.push(`LOG_LEVEL must be one of ${logLevels.join(', ')} (got "${logLevelRaw}")`);

  const hostPorts: Partial<Record<HostName, number>> = {};
  for (const host of HOSTS) {
    const port = int(`${host.toUpperCase()}_PORT`, undefined, 0, 65535);
    if (port !== undefined) hostPorts[host] = port;
  }

  const seedDemo = bool('SEED_DEMO', !production);
  if (production && seedDemo) problems.push('SEED_DEMO must not be true when NODE_ENV=production');

  const dataDir = path.resolve(read('DATA_DIR') ?? './data');
  const host = read('HOST') ?? '127.0.0.1';

  const port = int('PORT', 3000, 0, 65535) ?? 3000;
  // Where embedded mode actually listens: a host's own port, else the shared one.
  const ports = { base: hostPorts.base ?? port, reports: hostPorts.reports ?? port };

  const config: Config = {
    nodeEnv,
    host,
    port,
    hostPorts,
    dataDir,
    databaseFile: path.join(dataDir, 'amil.db'),
    logLevel: logLevel ?? 'info',
    seedDemo,
    trustProxy: bool('TRUST_PROXY', false),
    shutdownGraceMs: int('SHUTDOWN_GRACE_MS', 10_000, 0, 600_000) ?? 10_000,
    redisUrl: redisUrl(read('REDIS_URL'), problems),
    queuePrefix: read('QUEUE_PREFIX') ?? 'amil',
    adminPassword: adminPassword(read('ADMIN_PASSWORD'), production, host, problems),
    queueBoardWritable: bool('QUEUE_BOARD_WRITABLE', false),
    pipeline: {
      retryBaseMs: int('PIPELINE_RETRY_BASE_MS', 1000, 1, 3_600_000) ?? 1000,
      retryMaxMs: int('PIPELINE_RETRY_MAX_MS', 300_000, 1, 86_400_000) ?? 300_000,
      retryHorizonMs: retryHorizons(
        int('PIPELINE_RETRY_HORIZON_MS', 21_600_000, 0, 30 * 86_400_000) ?? 21_600_000,
        read('PIPELINE_RETRY_HORIZONS') ?? 'recon-nightly=86400000,recon-email=86400000,receipt=86400000',
        problems,
      ),
      reconcileMs: int('PIPELINE_RECONCILE_MS', 60_000, 50, 86_400_000) ?? 60_000,
      reconcileGraceMs: int('PIPELINE_RECONCILE_GRACE_MS', 60_000, 0, 86_400_000) ?? 60_000,
      workerLockMs: int('WORKER_LOCK_MS', 60_000, 200, 3_600_000) ?? 60_000,
      storeFaultMaxMs: int('STORE_FAULT_MAX_MS', 30_000, 10, 3_600_000) ?? 30_000,
      storeFaultLogMs: int('STORE_FAULT_LOG_MS', 60_000, 100, 86_400_000) ?? 60_000,
    },
    reportTokenSecret: reportTokenSecret(read('REPORT_TOKEN_SECRET'), production, problems),
    publicUrls: {
      base: publicUrl(
        'PUBLIC_BASE_URL',
        read('PUBLIC_BASE_URL'),
        defaultOrigin(host, ports.base),
        production,
        problems,
      ),
      reports: publicUrl(
        'PUBLIC_REPORTS_URL',
        read('PUBLIC_REPORTS_URL'),
        defaultOrigin(host, ports.reports),
        production,
        problems,
      ),
    },
    payLinkSecret: payLinkSecret(read('PAY_LINK_SECRET'), production, problems),
    qr: {
      pngTtlDays: int('QR_PNG_TTL_DAYS', 90, 1, 3650) ?? 90,
      renderThreads: int('QR_RENDER_THREADS', defaultRenderThreads, 1, 64) ?? defaultRenderThreads,
    },
    rateLimits: {
      // Tests post many requests from 127.0.0.1; those testing the limits set them low explicitly.
      pagesPerMinute: int('RATE_LIMIT_PAGES_PER_MINUTE', testing ? 100_000 : 300, 0, 1_000_000) ?? 300,
      ordersPerMinute: int('RATE_LIMIT_ORDERS_PER_MINUTE', testing ? 100_000 : 30, 0, 1_000_000) ?? 30,
      partnerAuthFailures: int('PARTNER_AUTH_MAX_FAILURES', testing ? 100_000 : 10, 0, 1_000_000) ?? 10,
      partnerAuthWindowSeconds: int('PARTNER_AUTH_WINDOW_SECONDS', 900, 1, 86_400) ?? 900,
    },
    webhook: {
      maxBodyBytes:
        int('WEBHOOK_MAX_BODY_BYTES', 5 * 1024 * 1024, 1024, 512 * 1024 * 1024) ?? 5 * 1024 * 1024,
      maxRecords: int('WEBHOOK_MAX_RECORDS', 5000, 1, 1_000_000) ?? 5000,
      routes: parseRoutes(read('BANK_AGENCY_ROUTES') ?? 'BANKLZS=LZS,BANKPPZ=PPZ,BANK=test', problems),
      // Bounded so every accepted time has a four-digit year, the form reports and workbooks look up.
      // Tests post fixed dates (the fixture day, 2026-11-20) with the real clock: a window of ten years
      // keeps them valid for years; the tests of the window set it explicitly.
      timePastDays: int('WEBHOOK_TIME_PAST_DAYS', testing ? 3650 : 400, 1, 3650) ?? 400,
      timeFutureMinutes: int('WEBHOOK_TIME_SKEW_MINUTES', 10, 0, 1440) ?? 10,
    },
    checkout: {
      acquirer: acquirerName(read('ACQUIRER'), production, bool('STAGING', false), problems),
      staging: bool('STAGING', false),
      unpaidExpiryMs: int('UNPAID_ORDER_EXPIRY_MS', 3_600_000, 1000, 30 * 86_400_000) ?? 3_600_000,
      maxAmountSen: maxAmountSen(read('CHECKOUT_MAX_AMOUNT'), problems),
      enquiryIntervalMs: int('PENDING_ENQUIRY_MS', 60_000, 50, 86_400_000) ?? 60_000,
      pendingExpiryMs: int('PENDING_EXPIRY_MS', 7_200_000, 1000, 30 * 86_400_000) ?? 7_200_000,
    },
    callbacks: {
      timeoutMs: int('CALLBACK_TIMEOUT_MS', 15_000, 100, 120_000) ?? 15_000,
      retryMs: int('CALLBACK_RETRY_MS', 30_000, 10, 3_600_000) ?? 30_000,
      fastPhaseMs: int('CALLBACK_FAST_PHASE_MS', 3_600_000, 0, 86_400_000) ?? 3_600_000,
      maxIntervalMs: int('CALLBACK_MAX_INTERVAL_MS', 3_600_000, 10, 86_400_000) ?? 3_600_000,
      giveUpMs: int('CALLBACK_GIVE_UP_MS', 259_200_000, 10, 30 * 86_400_000) ?? 259_200_000,
      allowedAddresses: (read('CALLBACK_ALLOWED_ADDRESSES') ?? (production ? '' : '127.0.0.1,::1'))
        .split(',')
        .map((a) => a.trim())
        .filter((a) => a !== ''),
    },
    recon: {
      cron: cronPattern(read('RECON_CRON') ?? '30 0 * * *', problems),
      dir: path.join(dataDir, 'reconciliation'),
      bankTestRecipients: emailList('BANK_TEST_RECIPIENTS', read('BANK_TEST_RECIPIENTS'), problems),
    },
    mail: {
      smtpUrl: smtpUrl(read('SMTP_URL'), problems),
      from: read('MAIL_FROM') ?? 'amil <reconciliation@amil.invalid>',
      receiptFrom: sender(
        'RECEIPT_MAIL_FROM',
        read('RECEIPT_MAIL_FROM') ?? read('MAIL_FROM') ?? 'amil <reconciliation@amil.invalid>',
        problems,
      ),
      dir: path.join(dataDir, 'mail'),
    },
    ...overrides,
  };

  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

/** `job=ms,...` over the default horizon: every pipeline job gets one, unknown job names are problems. */
function retryHorizons(fallback: number, raw: string, problems: string[]): Record<PipelineJobName, number> {
  const horizons = Object.fromEntries(PIPELINE_JOB_NAMES.map((name) => [name, fallback])) as Record<
    PipelineJobName,
    number
  >;
  for (const item of raw.split(',').map((i) => i.trim())) {
    if (item === '') continue;
    const match = /^([a-z-]+)=(\d+)$/.exec(item);
    const name = PIPELINE_JOB_NAMES.find((n) => n === match?.[1]);
    if (!match || !name) {
      problems.push(
        `PIPELINE_RETRY_HORIZONS must list job=ms with jobs among ${PIPELINE_JOB_NAMES.join(', ')} (got "${item}")`,
      );
      continue;
    }
    horizons[name] = Number(match[2]);
  }
  return horizons;
}

/** The demo admin password, printed in the README: fine on a laptop's loopback, refused anywhere else. */
export const DEMO_ADMIN_PASSWORD = 'demo-admin-password';

function adminPassword(
  raw: string | undefined,
  production: boolean,
  host: string,
  problems: string[],
): string | undefined {
  const loopback = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(host);
  if (raw === undefined) return production || !loopback ? undefined : DEMO_ADMIN_PASSWORD;
  if ((production || !loopback) && raw === DEMO_ADMIN_PASSWORD) {
    problems.push('ADMIN_PASSWORD must not be the demo password in production or on a non-loopback HOST');
  }
  if (raw.length < 12) problems.push('ADMIN_PASSWORD needs at least 12 characters');
  return raw;
}

/** The demo report-token secret: printed here, so refused in production. */
export const DEMO_REPORT_TOKEN_SECRET = 'demo-report-token-secret-not-for-production';

function reportTokenSecret(raw: string | undefined, production: boolean, problems: string[]): string {
  if (raw === undefined) {
    if (production) problems.push('REPORT_TOKEN_SECRET is required in production');
    return DEMO_REPORT_TOKEN_SECRET;
  }
  if (raw.length < 32) problems.push('REPORT_TOKEN_SECRET needs at least 32 characters');
  if (production && raw === DEMO_REPORT_TOKEN_SECRET)
    problems.push('REPORT_TOKEN_SECRET must not be the demo secret in production');
  return raw;
}

/** The demo pay-link secret: printed here, so refused in production. */
export const DEMO_PAY_LINK_SECRET = 'demo-pay-link-secret-not-for-production';

function payLinkSecret(raw: string | undefined, production: boolean, problems: string[]): string {
  if (raw === undefined) {
    if (production) problems.push('PAY_LINK_SECRET is required in production');
    return DEMO_PAY_LINK_SECRET;
  }
  if (raw.length < 32) problems.push('PAY_LINK_SECRET needs at least 32 characters');
  if (production && raw === DEMO_PAY_LINK_SECRET)
    problems.push('PAY_LINK_SECRET must not be the demo secret in production');
  return raw;
}

/** `http://<HOST>:<port>` as embedded mode listens; a wildcard HOST is reached on 127.0.0.1. */
function defaultOrigin(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/**
 * A public origin: http(s), a host, an optional port, nothing else (no user, path, query or fragment).
 * Required in production, where the listening address is rarely what payers' phones reach (QR codes are
 * printed: a wrong origin is found only on the poster).
 */
function publicUrl(
  name: string,
  raw: string | undefined,
  fallback: string,
  production: boolean,
  problems: string[],
): string {
  if (raw === undefined) {
    if (production)
      problems.push(`${name} is required in production (the public origin, e.g. https://pay.example.my)`);
    return fallback;
  }
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (
    !url ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.pathname !== '/' ||
    /[?#]/.test(raw)
  ) {
    problems.push(
      `${name} must be an http(s) origin like https://pay.example.my, without a path (got "${raw}")`,
    );
    return fallback;
  }
  return url.origin;
}

/**
 * The acquirer: the sandbox by default outside production, none in production. The sandbox approves
 * payments without moving money, so production refuses it unless the deployment says it is staging.
 */
function acquirerName(
  raw: string | undefined,
  production: boolean,
  staging: boolean,
  problems: string[],
): AcquirerName {
  const name = ACQUIRERS.find((a) => a === (raw ?? (production ? 'none' : 'sandbox')));
  if (!name) {
    problems.push(`ACQUIRER must be one of ${ACQUIRERS.join(', ')} (got "${raw}")`);
    return 'none';
  }
  if (name === 'sandbox' && production && !staging) {
    problems.push(
      'ACQUIRER=sandbox approves payments without moving money: refused when NODE_ENV=production ' +
        '(a staging deployment says so with STAGING=true)',
    );
  }
  return name;
}

function maxAmountSen(raw: string | undefined, problems: string[]): number {
  if (raw === undefined) return 3_000_000;
  const sen = ringgitStringToSen(raw);
  if (sen === undefined || sen < 100) {
    problems.push(`CHECKOUT_MAX_AMOUNT must be ringgit like 30000.00, at least 1.00 (got "${raw}")`);
    return 3_000_000;
  }
  return sen;
}

function redisUrl(raw: string | undefined, problems: string[]): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^rediss?:\/\/[^\s]+$/.test(raw)) {
    // Never echo the value: it may carry a password.
    problems.push('REDIS_URL must look like redis://host:6379 or redis://:password@host:6379');
  }
  return raw;
}

function parseRoutes(raw: string, problems: string[]): Record<string, BankRoute> {
  const routes: Record<string, BankRoute> = {};
  for (const entry of raw.split(',')) {
    const match = /^\s*([A-Z][A-Z0-9_]{0,31})\s*=\s*([A-Za-z][A-Za-z0-9_]{0,31})\s*$/.exec(entry);
    if (!match) {
      problems.push(`BANK_AGENCY_ROUTES entry "${entry}" must look like BANKLZS=LZS or BANK=test`);
      continue;
    }
    const [, code = '', target = ''] = match;
    if (routes[code]) problems.push(`BANK_AGENCY_ROUTES names ${code} twice`);
    routes[code] = target === 'test' ? { kind: 'test' } : { kind: 'agency', agency: target.toUpperCase() };
  }
  return routes;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

function cronPattern(raw: string, problems: string[]): string {
  try {
    cronParser.parseExpression(raw, { tz: BUSINESS_TIMEZONE });
  } catch {
    problems.push(`RECON_CRON must be a cron pattern like "30 0 * * *" (got "${raw}")`);
  }
  return raw;
}

const EMAIL = /^[^\s@,<>]+@[^\s@,<>]+\.[^\s@,<>]+$/;

function emailList(name: string, raw: string | undefined, problems: string[]): string[] {
  const list = (raw ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  for (const address of list)
    if (!EMAIL.test(address)) problems.push(`${name}: "${address}" is not an e-mail address`);
  return list;
}

/** A sender: an address, alone or as `Name <address>`. */
function sender(name: string, raw: string, problems: string[]): string {
  const address = /<([^<>]*)>\s*$/.exec(raw)?.[1] ?? raw.trim();
  if (!EMAIL.test(address)) problems.push(`${name} must be an address or Name <address> (got "${raw}")`);
  return raw;
}

function smtpUrl(raw: string | undefined, problems: string[]): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^smtps?:\/\/[^\s/]+(:\d+)?\/?(\?.*)?$/.test(raw)) {
    problems.push('SMTP_URL must look like smtp://host:587 or smtps://user:password@host:465');
  }
  return raw;
}
