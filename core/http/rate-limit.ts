import { createRequire } from 'node:module';
import type * as IORedis from 'ioredis';
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';

/** A per-client budget of points over a fixed window. */
export interface ClientLimit {
  /** Takes `points` from the client's budget; `retryAfterSeconds` is set when the budget was exhausted. */
  consume(client: string, points?: number): Promise<{ retryAfterSeconds?: number }>;
  /** Gives `points` back (a reserved attempt that turned out fine). */
  reward(client: string, points?: number): Promise<void>;
}

/** The process's per-client limits (docs/decisions.md); one per process, closed on shutdown. */
export interface RateLimits {
  /** Anonymous page requests; undefined when the limit is 0 (off). */
  readonly pages: ClientLimit | undefined;
  /** Orders opened through the anonymous pay page. */
  readonly orders: ClientLimit | undefined;
  /** Wrong X-API-Password values. */
  readonly partnerAuthFailures: ClientLimit | undefined;
  /** Failed dashboard sign-ins (password or TOTP code), counted per e-mail address. */
  readonly dashboardLoginPerUser: ClientLimit | undefined;
  /** Failed dashboard sign-ins, counted per client IP whatever the address. */
  readonly dashboardLoginPerClient: ClientLimit | undefined;
  /** Closes the Redis connection, if one was opened. */
  close(): Promise<void>;
}

const MINUTE = 60;
/** Longest a limit waits for Redis before the in-memory insurance limiter decides. */
const COMMAND_TIMEOUT_MS = 500;

/**
 * ioredis, loaded with the first limit that counts in Redis: a process in embedded mode (every CLI run, most
 * test processes) does not pay the 0.3 s of CPU it takes to load (decision 257).
 */
const loadRedis = (): typeof Redis => (createRequire(import.meta.url)('ioredis') as typeof IORedis).Redis;

/**
 * The per-client limits of `config.rateLimits`, with rate-limiter-flexible. With REDIS_URL the counters
 * live in Redis, so every web process shares them; when Redis does not answer, each process falls back to
 * an in-memory limiter with the same budget (the insurance limiter): a Redis outage never takes the pay
 * page down, and a client is still limited, per process. The Redis connection opens on first use.
 */
export function createRateLimits(config: Config, logger: Logger): RateLimits {
  let redis: Redis | undefined;
  let wasReady = false;
  const redisClient = (): Redis => {
    if (redis) return redis;
    const client = new (loadRedis())(config.redisUrl ?? '', {
      // The first commands wait for the first connection (so every process counts in Redis from the
      // start); a command that hangs gives way to the insurance limiter after COMMAND_TIMEOUT_MS.
      commandTimeout: COMMAND_TIMEOUT_MS,
      maxRetriesPerRequest: 1,
    });
    client.on('ready', () => (wasReady = true));
    // Reconnection is automatic; the insurance limiter covers the gap.
    client.on('error', (err: Error) => logger.warn({ err: err.message }, 'rate limits: Redis unreachable'));
    redis = client;
    return client;
  };
  // Once connected, a lost connection sends requests straight to the insurance limiter, with no wait.
  const redisDown = (): boolean => wasReady && redis !== undefined && redis.status !== 'ready';

  const limit = (name: string, points: number, duration: number): ClientLimit | undefined => {
    if (points === 0) return undefined;
    const keyPrefix = `${config.queuePrefix}:rl:${name}`;
    const memory = new RateLimiterMemory({ keyPrefix, points, duration });
    let shared: RateLimiterAbstract | undefined;
    const limiterOf = (): RateLimiterAbstract => {
      if (!config.redisUrl || redisDown()) return memory;
      shared ??= new RateLimiterRedis({
        storeClient: redisClient(),
        keyPrefix,
        points,
        duration,
        insuranceLimiter: memory,
      });
      return shared;
    };
    return {
      async consume(client, taken = 1) {
        try {
          await limiterOf().consume(client, taken);
          return {};
        } catch (res) {
          if (res instanceof RateLimiterRes) return { retryAfterSeconds: retryAfter(res) };
          throw res;
        }
      },
      async reward(client, given = 1) {
        await limiterOf().reward(client, given);
      },
    };
  };

  const { rateLimits, dashboard } = config;
  return {
    pages: limit('pages', rateLimits.pagesPerMinute, MINUTE),
    orders: limit('orders', rateLimits.ordersPerMinute, MINUTE),
    partnerAuthFailures: limit(
      'partner-auth',
      rateLimits.partnerAuthFailures,
      rateLimits.partnerAuthWindowSeconds,
    ),
    dashboardLoginPerUser: limit(
      'dashboard-login-user',
      dashboard.loginFailuresPerUser,
      dashboard.loginWindowSeconds,
    ),
    dashboardLoginPerClient: limit(
      'dashboard-login-client',
      dashboard.loginFailuresPerClient,
      dashboard.loginWindowSeconds,
    ),
    async close() {
      const client = redis;
      redis = undefined;
      if (client) await client.quit().catch(() => client.disconnect());
    },
  };
}

/** Whole seconds until the window ends, at least 1 (Retry-After has no fractions). */
function retryAfter(res: RateLimiterRes): number {
  return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
}
