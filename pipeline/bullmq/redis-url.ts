import type { Deps } from '../../core/deps.ts';

/**
 * REDIS_URL, which Redis mode cannot run without. Apart from pipeline/bullmq/queues.ts: a web process
 * publishes its wakes over a plain connection and need not load BullMQ for it.
 */
export function redisUrlOf(deps: Deps): string {
  const url = deps.config.redisUrl;
  if (!url) throw new Error('BullMQ needs REDIS_URL');
  return url;
}
