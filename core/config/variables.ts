/**
 * The configuration table: one entry per environment variable (name, parser with its bounds, default, the
 * README's default and meaning cells, production guards), placed where its value goes in Config. The
 * Config type, the validation and the README's configuration table are derived from it. Over 350 lines
 * because it is one table, read top to bottom like the README table it makes.
 */
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { ACQUIRERS, LOG_LEVELS, NODE_ENVS, PIPELINE_JOB_NAMES, type HostName } from './names.ts';
import {
  bankRoutes,
  bool,
  cron,
  directory,
  emails,
  int,
  jobHorizons,
  list,
  oneOf,
  origin,
  postgresUrl,
  redisUrl,
  ringgit,
  secret,
  sender,
  smtpUrl,
  text,
} from './parsers.ts';
import {
  DEMO_ADMIN_PASSWORD,
  DEMO_PAY_LINK_SECRET,
  DEMO_REPORT_TOKEN_SECRET,
  demoPasswordOnLoopbackOnly,
  isLoopback,
  noDemoSeeding,
  notTheDemoSecret,
  requiredInProduction,
  sandboxOnlyInStaging,
} from './production.ts';
import { derived, optional, variable, type Context, type Tree } from './variable.ts';

// The variables other entries read (defaults, guards, derived settings) come first, by name.

export const NODE_ENV = variable({
  name: 'NODE_ENV',
  parse: oneOf(NODE_ENVS, 'development, test or production'),
  default: 'development',
  doc: '`production` refuses demo data and demo secrets',
});
const HOST = variable({
  name: 'HOST',
  parse: text,
  default: '127.0.0.1',
  doc: 'Interface the web process listens on',
});
const PORT = variable({
  name: 'PORT',
  parse: int(0, 65535),
  default: '3000',
  doc: 'Port serving every host that has no port of its own',
});
const HOST_PORTS = {
  base: optional({
    name: 'BASE_PORT',
    parse: int(0, 65535),
    doc: 'Serve the checkout host `{base_url}` on its own port',
  }),
  reports: optional({
    name: 'REPORTS_PORT',
    parse: int(0, 65535),
    doc: 'Serve the reports host `{reports_url}` on its own port',
  }),
  pay: optional({
    name: 'PAY_PORT',
    parse: int(0, 65535),
    doc: 'Serve the bank webhook host `{pay_url}` on its own port',
  }),
} satisfies Record<HostName, unknown>;
const DATA_DIR = variable({
  name: 'DATA_DIR',
  parse: directory,
  default: './data',
  doc: 'Directory of the SQLite database (`amil.db`)',
});
const PIPELINE_RETRY_HORIZON_MS = variable({
  name: 'PIPELINE_RETRY_HORIZON_MS',
  parse: int(0, 30 * 86_400_000),
  default: '21600000',
  doc: 'How long (6 h) a failing pipeline job keeps retrying before it shows as failed; it is still re-driven every PIPELINE_RETRY_MAX_MS',
});
const PIPELINE_RETRY_HORIZONS = variable({
  name: 'PIPELINE_RETRY_HORIZONS',
  parse: jobHorizons,
  default: 'recon-nightly=86400000,recon-email=86400000,receipt=86400000',
  doc: `Per-job horizons in ms overriding PIPELINE_RETRY_HORIZON_MS (\`job=ms\`, comma-separated; jobs: ${PIPELINE_JOB_NAMES.join(', ')}; \`callback\` is accepted and has no effect: callbacks retry on CALLBACK_*, decision 264)`,
});
const STAGING = variable({
  name: 'STAGING',
  parse: bool,
  default: 'false',
  doc: 'A production deployment that is a staging one: only then may `ACQUIRER=sandbox` run with NODE_ENV=production',
});
const MAIL_FROM = variable({
  name: 'MAIL_FROM',
  parse: text,
  default: 'amil <reconciliation@amil.invalid>',
  doc: 'Sender of the nightly e-mails',
});

/** `http://<HOST>:<port>` as embedded mode listens; a wildcard HOST is reached on 127.0.0.1. */
function listeningOrigin(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/** Tests post many requests from 127.0.0.1; those testing the limits set them low explicitly. */
const limit = (production: number) => (ctx: Context) => String(ctx.testing ? 100_000 : production);

/** Every setting, in the shape of Config. */
export const SETTINGS = {
  nodeEnv: NODE_ENV,
  host: HOST,
  port: PORT,
  /** Hosts given a port of their own; the others are served on PORT. */
  hostPorts: derived([HOST_PORTS.base, HOST_PORTS.reports, HOST_PORTS.pay], (base, reports, pay) => {
    const ports: Partial<Record<HostName, number>> = {};
    for (const [host, port] of [
      ['base', base],
      ['reports', reports],
      ['pay', pay],
    ] as const)
      if (port !== undefined) ports[host] = port;
    return ports;
  }),
  dataDir: DATA_DIR,
  databaseFile: derived([DATA_DIR], (dir) => path.join(dir, 'amil.db')),
  /** Set: the store is PostgreSQL (several machines); unset: SQLite in DATA_DIR. */
  databaseUrl: optional({
    name: 'DATABASE_URL',
    parse: postgresUrl,
    doc: 'PostgreSQL store (`postgres://user:password@host:5432/amil`) shared by every web and worker process; unset keeps SQLite in DATA_DIR',
  }),
  /** PostgreSQL ends a session of this process idle this long inside a transaction (decision 263). */
  databaseIdleTransactionMs: variable({
    name: 'DATABASE_IDLE_TRANSACTION_MS',
    parse: int(1000, 3_600_000),
    default: '60000',
    doc: 'PostgreSQL ends a session of this process idle this long in a transaction (a frozen process: paused VM, SIGSTOP), freeing its locks',
  }),
  logLevel: variable({
    name: 'LOG_LEVEL',
    parse: oneOf(LOG_LEVELS),
    default: 'info',
    doc: `pino level: ${LOG_LEVELS.join(', ')}`,
  }),
  seedDemo: variable({
    name: 'SEED_DEMO',
    parse: bool,
    default: (ctx) => String(!ctx.production),
    readme: 'true (false in production)',
    doc: 'Seed the demo agencies and partner password from `fixtures/demo/` at start-up',
    production: [noDemoSeeding],
  }),
  trustProxy: variable({
    name: 'TRUST_PROXY',
    parse: bool,
    default: 'false',
    doc: 'Trust `X-Forwarded-*` headers (set when behind a reverse proxy)',
  }),
  shutdownGraceMs: variable({
    name: 'SHUTDOWN_GRACE_MS',
    parse: int(0, 600_000),
    default: '10000',
    doc: 'On SIGTERM/SIGINT, how long in-flight requests may finish before connections are cut',
  }),
  /** Unset runs the pipeline in-process (embedded mode). */
  redisUrl: optional({
    name: 'REDIS_URL',
    parse: redisUrl,
    doc: 'Redis for the BullMQ pipeline (`redis://host:6379`); unset runs the pipeline inside the web process (embedded mode)',
  }),
  queuePrefix: variable({
    name: 'QUEUE_PREFIX',
    parse: text,
    default: 'amil',
    doc: 'Key prefix of the BullMQ queues in Redis',
  }),
  /** How pipeline jobs retry, and how the workers keep the outbox and Redis in step (docs/pipeline.md). */
  pipeline: {
    pollMs: variable({
      name: 'PIPELINE_POLL_MS',
      parse: int(10, 60_000),
      default: '500',
      doc: 'How often the pipeline looks at the outbox when nothing wakes it: rows written by this process, or announced over Redis, start at once',
    }),
    retryBaseMs: variable({
      name: 'PIPELINE_RETRY_BASE_MS',
      parse: int(1, 3_600_000),
      default: '1000',
      doc: 'First retry delay of a failed pipeline job; doubled per attempt up to PIPELINE_RETRY_MAX_MS',
    }),
    retryMaxMs: variable({
      name: 'PIPELINE_RETRY_MAX_MS',
      parse: int(1, 86_400_000),
      default: '300000',
      doc: 'Longest delay (5 min) between two attempts of a pipeline job',
    }),
    /** Per job: how long it keeps retrying. */
    retryHorizonMs: derived([PIPELINE_RETRY_HORIZON_MS, PIPELINE_RETRY_HORIZONS], (horizon, perJob) => ({
      ...(Object.fromEntries(PIPELINE_JOB_NAMES.map((job) => [job, horizon])) as Record<
        (typeof PIPELINE_JOB_NAMES)[number],
        number
      >),
      ...perJob,
    })),
    reconcileMs: variable({
      name: 'PIPELINE_RECONCILE_MS',
      parse: int(50, 86_400_000),
      default: '60000',
      doc: 'Redis mode: how often a worker re-adds outbox jobs Redis no longer holds',
    }),
    reconcileGraceMs: variable({
      name: 'PIPELINE_RECONCILE_GRACE_MS',
      parse: int(0, 86_400_000),
      default: '60000',
      doc: 'Redis mode: an outbox row handed to Redis and not done for this long is looked for in Redis',
    }),
    workerLockMs: variable({
      name: 'WORKER_LOCK_MS',
      parse: int(200, 3_600_000),
      default: '60000',
      doc: "Redis mode: lock of a job in flight; a killed worker's job is handed back this long after",
    }),
    outboxKeepMs: variable({
      name: 'OUTBOX_KEEP_DAYS',
      parse: (raw, name, problems) => int(1, 3650)(raw, name, problems) * 86_400_000,
      default: '7',
      doc: 'Days an outbox row is kept once its job is done, then deleted (what the job wrote stays), as BullMQ keeps completed jobs',
    }),
    storeFaultMaxMs: variable({
      name: 'STORE_FAULT_MAX_MS',
      parse: int(10, 3_600_000),
      default: '30000',
      doc: 'Embedded mode: longest pause of the pipeline while the database cannot write (full disk); it backs off up to this',
    }),
    storeFaultLogMs: variable({
      name: 'STORE_FAULT_LOG_MS',
      parse: int(100, 86_400_000),
      default: '60000',
      doc: 'Embedded mode: a database that cannot write is logged once per this interval, not per attempt',
    }),
  },
  /** Unset disables the admin pages and GET /metrics. */
  adminPassword: optional({
    name: 'ADMIN_PASSWORD',
    parse: secret(12),
    default: (ctx) => (ctx.production || !isLoopback(ctx.get(HOST)) ? undefined : DEMO_ADMIN_PASSWORD),
    readme: 'demo-admin-password (unset in production or on a non-loopback HOST)',
    doc: 'Password of user `admin` for the admin pages (`/admin/queues`, Redis mode) and `/metrics`; unset disables them',
    production: [demoPasswordOnLoopbackOnly(HOST)],
  }),
  reportTokenSecret: variable({
    name: 'REPORT_TOKEN_SECRET',
    parse: secret(32),
    default: DEMO_REPORT_TOKEN_SECRET,
    readme: 'a demo secret (required in production)',
    doc: 'Secret that signs report tokens (JWT, HS256), at least 32 characters; changing it voids every token',
    production: [requiredInProduction(), notTheDemoSecret(DEMO_REPORT_TOKEN_SECRET)],
  }),
  /** The merchant dashboard on {reports_url} (issue 18): sessions and sign-in limits. */
  dashboard: {
    sessionSecret: optional({
      name: 'DASHBOARD_SESSION_SECRET',
      parse: secret(32),
      readme: 'derived from REPORT_TOKEN_SECRET',
      doc: 'Secret that signs the dashboard session cookies (HMAC-SHA256), at least 32 characters; changing it signs every dashboard user out',
    }),
    idleMinutes: variable({
      name: 'DASHBOARD_SESSION_IDLE_MINUTES',
      parse: int(1, 1440),
      default: '30',
      doc: 'A dashboard session unused this long ends (sign in again)',
    }),
    maxHours: variable({
      name: 'DASHBOARD_SESSION_MAX_HOURS',
      parse: int(1, 720),
      default: '12',
      doc: 'A dashboard session ends this long after sign-in, however active',
    }),
    loginFailuresPerUser: variable({
      name: 'DASHBOARD_LOGIN_MAX_FAILURES',
      parse: int(0, 1_000_000),
      default: limit(5),
      readme: '`5 (100000 when NODE_ENV=test)`',
      doc: 'Wrong passwords or codes per dashboard e-mail per window; more get 429 with `Retry-After`; 0 = no limit',
    }),
    loginFailuresPerClient: variable({
      name: 'DASHBOARD_LOGIN_MAX_FAILURES_PER_CLIENT',
      parse: int(0, 1_000_000),
      default: limit(20),
      readme: '`20 (100000 when NODE_ENV=test)`',
      doc: 'Wrong dashboard sign-ins per client IP per window, whatever the e-mail; more get 429; 0 = no limit',
    }),
    loginWindowSeconds: variable({
      name: 'DASHBOARD_LOGIN_WINDOW_SECONDS',
      parse: int(1, 86_400),
      default: '900',
      doc: 'The window of the two dashboard sign-in limits, in seconds',
    }),
  },
  /** Public origins of the hosts, for absolute URLs in QR codes; default: where embedded mode listens. */
  publicUrls: {
    base: derived(
      [
        optional({
          name: 'PUBLIC_BASE_URL',
          parse: origin,
          readme: '`http://127.0.0.1:{BASE_PORT or PORT}` (required in production)',
          doc: 'Public origin of the checkout host `{base_url}` (`https://host[:port]`, no path): pay links and QR codes point here',
          production: [requiredInProduction(' (the public origin, e.g. https://pay.example.my)')],
        }),
        HOST,
        HOST_PORTS.base,
        PORT,
      ],
      (url, host, own, port) => url ?? listeningOrigin(host, own ?? port),
    ),
    reports: derived(
      [
        optional({
          name: 'PUBLIC_REPORTS_URL',
          parse: origin,
          readme: '`http://127.0.0.1:{REPORTS_PORT or PORT}` (required in production)',
          doc: 'Public origin of the reports host `{reports_url}`: the PNG URLs of generated QR codes point here',
          production: [requiredInProduction(' (the public origin, e.g. https://pay.example.my)')],
        }),
        HOST,
        HOST_PORTS.reports,
        PORT,
      ],
      (url, host, own, port) => url ?? listeningOrigin(host, own ?? port),
    ),
  },
  payLinkSecret: variable({
    name: 'PAY_LINK_SECRET',
    parse: secret(32),
    default: DEMO_PAY_LINK_SECRET,
    readme: 'a demo secret (required in production)',
    doc: 'Secret that signs the pay links of signed QR codes, at least 32 characters; changing it voids every signed QR code',
    production: [requiredInProduction(), notTheDemoSecret(DEMO_PAY_LINK_SECRET)],
  }),
  qr: {
    pngTtlDays: variable({
      name: 'QR_PNG_TTL_DAYS',
      parse: int(1, 3650),
      default: '90',
      doc: 'Days the PNG URL of a generated QR code is served (then 410); the pay link inside never expires',
    }),
    renderThreads: variable({
      name: 'QR_RENDER_THREADS',
      parse: int(1, 64),
      // One core is left to the event loop; more than four threads buys nothing for PNGs of this size.
      default: () => String(Math.max(1, Math.min(4, availableParallelism() - 1))),
      readme: '`cores - 1, 1 to 4`',
      doc: 'Worker threads that draw QR code PNGs (off the event loop); rendered PNGs are also cached',
    }),
  },
  /** Per-client limits (by `ctx.ip`), shared through Redis when REDIS_URL is set; 0 means no limit. */
  rateLimits: {
    pagesPerMinute: variable({
      name: 'RATE_LIMIT_PAGES_PER_MINUTE',
      parse: int(0, 1_000_000),
      default: limit(300),
      readme: '`300 (100000 when NODE_ENV=test)`',
      doc: 'Requests per client IP per minute to the anonymous pages (pay page, checkout pages, `/qr2/`, sandbox bank); more get 429 with `Retry-After`; 0 = no limit',
    }),
    ordersPerMinute: variable({
      name: 'RATE_LIMIT_ORDERS_PER_MINUTE',
      parse: int(0, 1_000_000),
      default: limit(30),
      readme: '`30 (100000 when NODE_ENV=test)`',
      doc: 'Orders per client IP per minute opened through the anonymous pay page (`POST /pay/...`); more get 429; 0 = no limit',
    }),
    partnerAuthFailures: variable({
      name: 'PARTNER_AUTH_MAX_FAILURES',
      parse: int(0, 1_000_000),
      default: limit(10),
      readme: '`10 (100000 when NODE_ENV=test)`',
      doc: 'Wrong `X-API-Password` values per client IP per window; more get 429 with `Retry-After` before any password check; 0 = no limit',
    }),
    partnerAuthWindowSeconds: variable({
      name: 'PARTNER_AUTH_WINDOW_SECONDS',
      parse: int(1, 86_400),
      default: '900',
      doc: 'The window of PARTNER_AUTH_MAX_FAILURES, in seconds',
    }),
  },
  queueBoardWritable: variable({
    name: 'QUEUE_BOARD_WRITABLE',
    parse: bool,
    default: 'false',
    doc: 'Let Bull Board retry, promote and remove jobs; by default it only shows them',
  }),
  webhook: {
    maxBodyBytes: variable({
      name: 'WEBHOOK_MAX_BODY_BYTES',
      parse: int(1024, 512 * 1024 * 1024),
      default: '5242880',
      doc: 'Largest bank webhook body accepted (5 MiB); larger gets 413',
    }),
    maxRecords: variable({
      name: 'WEBHOOK_MAX_RECORDS',
      parse: int(1, 1_000_000),
      default: '5000',
      doc: 'Most records in one webhook batch; more gets 413',
    }),
    timePastDays: variable({
      name: 'WEBHOOK_TIME_PAST_DAYS',
      // Bounded so every accepted time has a four-digit year, the form reports and workbooks look up.
      // Tests post fixed dates (the fixture day, 2026-11-20) with the real clock: a window of ten years
      // keeps them valid for years; the tests of the window set it explicitly.
      parse: int(1, 3650),
      default: (ctx) => (ctx.testing ? '3650' : '400'),
      readme: '`400 (3650 when NODE_ENV=test)`',
      doc: 'A record `time` more days than this before its batch arrived is refused (422); 1 to 3650',
    }),
    timeFutureMinutes: variable({
      name: 'WEBHOOK_TIME_SKEW_MINUTES',
      parse: int(0, 1440),
      default: '10',
      doc: 'A record `time` more minutes than this after its batch arrived is refused (422); 0 to 1440',
    }),
    threads: variable({
      name: 'WEBHOOK_THREADS',
      parse: int(0, 64),
      // One core is left to the event loop, which commits the batches; 0 keeps every body on it.
      default: () => String(Math.max(1, Math.min(4, availableParallelism() - 1))),
      readme: '`cores - 1, 1 to 4`',
      doc: 'Worker threads that parse, schema-check and prepare webhook bodies of 64 KiB and more off the event loop; 0 = on the request thread',
    }),
    /** Bank agency code -> route, e.g. BANKLZS -> agency LZS, BANK -> test sink. */
    routes: variable({
      name: 'BANK_AGENCY_ROUTES',
      parse: bankRoutes,
      default: 'BANKLZS=LZS,BANKPPZ=PPZ,BANK=test',
      doc: 'Accepted bank agency codes and where each routes: a zakat agency code, or `test` for live-test entries',
    }),
  },
  checkout: {
    maxAmountSen: variable({
      name: 'CHECKOUT_MAX_AMOUNT',
      parse: ringgit,
      default: '30000.00',
      doc: 'Largest checkout `amount` in ringgit (the FPX B2C limit); larger is refused',
    }),
    acquirer: variable({
      name: 'ACQUIRER',
      parse: oneOf(ACQUIRERS),
      default: (ctx) => (ctx.production ? 'none' : 'sandbox'),
      readme: '`sandbox` (`none` in production)',
      doc: 'Where payments go: `sandbox` (simulated banks, no money moves) or `none` (payments not configured); see docs/acquirers.md',
      production: [sandboxOnlyInStaging(STAGING)],
    }),
    staging: STAGING,
    unpaidExpiryMs: variable({
      name: 'UNPAID_ORDER_EXPIRY_MS',
      parse: int(1000, 30 * 86_400_000),
      default: '3600000',
      doc: 'An order nobody took to the bank this long (1 h) after it was made becomes `failed`, code `XA`',
    }),
    enquiryIntervalMs: variable({
      name: 'PENDING_ENQUIRY_MS',
      parse: int(50, 86_400_000),
      default: '60000',
      doc: 'How often pending payments are enquired at their acquirer',
    }),
    pendingExpiryMs: variable({
      name: 'PENDING_EXPIRY_MS',
      parse: int(1000, 30 * 86_400_000),
      default: '7200000',
      doc: 'A payment still pending this long (2 h) after its order becomes `failed`, code `XP`',
    }),
  },
  callbacks: {
    timeoutMs: variable({
      name: 'CALLBACK_TIMEOUT_MS',
      parse: int(100, 120_000),
      default: '15000',
      doc: 'Timeout of one callback delivery attempt',
    }),
    retryMs: variable({
      name: 'CALLBACK_RETRY_MS',
      parse: int(10, 3_600_000),
      default: '30000',
      doc: 'Callback retry interval (plus or minus 20% jitter) during the first hour',
    }),
    fastPhaseMs: variable({
      name: 'CALLBACK_FAST_PHASE_MS',
      parse: int(0, 86_400_000),
      default: '3600000',
      doc: 'How long callbacks retry at CALLBACK_RETRY_MS; then the interval doubles per attempt',
    }),
    maxIntervalMs: variable({
      name: 'CALLBACK_MAX_INTERVAL_MS',
      parse: int(10, 86_400_000),
      default: '3600000',
      doc: 'Longest interval between callback attempts after the first hour',
    }),
    giveUpMs: variable({
      name: 'CALLBACK_GIVE_UP_MS',
      parse: int(10, 30 * 86_400_000),
      default: '259200000',
      doc: 'A callback not acknowledged within this time (3 days) from its first attempt is given up (dead)',
    }),
    allowedAddresses: variable({
      name: 'CALLBACK_ALLOWED_ADDRESSES',
      parse: list,
      default: (ctx) => (ctx.production ? '' : '127.0.0.1,::1'),
      readme: '127.0.0.1,::1 (none in production)',
      doc: 'Private or loopback addresses (IPs or CIDRs, comma-separated) callbacks may reach; all others of those ranges are refused',
    }),
  },
  recon: {
    cron: variable({
      name: 'RECON_CRON',
      parse: cron,
      default: '30 0 * * *',
      doc: 'When the nightly reconciliation runs (cron, in Asia/Kuala_Lumpur time); it builds the workbooks of the day before',
    }),
    dir: derived([DATA_DIR], (dir) => path.join(dir, 'reconciliation')),
    bankTestRecipients: variable({
      name: 'BANK_TEST_RECIPIENTS',
      parse: emails,
      default: '',
      readme: '(none)',
      doc: "E-mail addresses (comma-separated) that receive the bank's live-test report each night",
    }),
  },
  mail: {
    /** Unset writes each e-mail as an .eml file under `dir`. */
    smtpUrl: optional({
      name: 'SMTP_URL',
      parse: smtpUrl,
      readme: '(unset: .eml files)',
      doc: "SMTP server for the nightly e-mails and payers' receipts, e.g. `smtp://user:pass@mail.example:587`; unset writes each e-mail to `DATA_DIR/mail/*.eml`",
    }),
    timeoutMs: variable({
      name: 'SMTP_TIMEOUT_MS',
      parse: int(1000, 600_000),
      default: '60000',
      doc: "How long an SMTP attempt waits on the server for each step (connecting, its greeting, each read); a receipt's lease is three times this",
    }),
    from: MAIL_FROM,
    receiptFrom: variable({
      name: 'RECEIPT_MAIL_FROM',
      parse: sender,
      default: (ctx) => ctx.get(MAIL_FROM),
      readme: 'MAIL_FROM',
      doc: "Sender of payers' receipts (`Name <address>`), e.g. the agency's own `resit@...` address",
    }),
    dir: derived([DATA_DIR], (dir) => path.join(dir, 'mail')),
  },
} satisfies Tree;
