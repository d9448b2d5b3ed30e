import type { Config } from './config.ts';
import type { Store } from './store/index.ts';
import type { Logger } from './logger.ts';
import type { Clock } from './clock.ts';
import type { Validators } from '../schemas/index.ts';
import type { Acquirer } from './acquirer/types.ts';
import type { CallbackClient } from './outbound/callback-client.ts';
import type { Mailer } from './outbound/mailer.ts';
import type { Readiness } from './readiness.ts';
import type { Metrics } from './metrics.ts';
import type { RateLimits } from './http/rate-limit.ts';
import type { QrRenderer } from './qr/renderer.ts';

/** Everything a handler, service or job may use; built once per process by its composition root. */
export interface Deps {
  readonly config: Config;
  readonly store: Store;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly validators: Validators;
  /** Where checkout sends payments (ACQUIRER); null when payments are not configured. */
  readonly acquirer: Acquirer | null;
  /** Sends merchant callbacks (SSRF-safe); close it with the store. */
  readonly callbacks: CallbackClient;
  /** Sends the nightly e-mails: SMTP, or .eml files in embedded mode. */
  readonly mailer: Mailer;
  /** What GET /health/ready checks: the store commits, and what the process adds (Redis in Redis mode). */
  readonly readiness: Readiness;
  /** This process's Prometheus registry (GET /metrics). */
  readonly metrics: Metrics;
  /** Per-client limits (anonymous pages, wrong partner passwords); close it on shutdown. */
  readonly limits: RateLimits;
  /** Draws QR PNGs on worker threads, behind a cache; close it on shutdown. */
  readonly qr: QrRenderer;
}
