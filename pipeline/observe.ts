import type { Deps } from '../core/deps.ts';
import { pipelineQueueNames } from './queues.ts';

/** How long readiness waits for Redis before calling it down. */
const REDIS_PING_TIMEOUT_MS = 2000;

/**
 * Lets the web process see its pipeline: in Redis mode Redis joins readiness (PING) and the queue gauges
 * read BullMQ's counts from Redis at each scrape, so one scrape of the web process covers the workers too;
 * in embedded mode the outbox is the queue and its rows are the jobs. Close it with the process. BullMQ is
 * loaded in Redis mode only (decision 257).
 */
export async function observePipeline(deps: Deps): Promise<{ close(): Promise<void> }> {
  const url = deps.config.redisUrl;
  if (!url) {
    deps.metrics.setQueueCounts(async () =>
      (await deps.store.ops.outboxBacklog()).map((row) => ({
        queue: row.queue,
        waiting: row.waiting,
        active: 0,
        delayed: 0,
        failed: row.failed,
      })),
    );
    return { close: () => Promise.resolve() };
  }
  // Loaded in Redis mode only, as BullMQ is below.
  const { Redis } = await import('ioredis');
  // No offline queue: a PING while Redis is down fails at once instead of waiting for a reconnect.
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: REDIS_PING_TIMEOUT_MS,
  });
  redis.on('error', () => undefined); // readiness reports it
  deps.readiness.add('redis', async () => {
    await redis.ping();
  });
  const { openQueues, readQueueCounts } = await import('./bullmq/queues.ts');
  const queues = openQueues(deps);
  const names = pipelineQueueNames(deps.config);
  deps.metrics.setQueueCounts(() => readQueueCounts(queues, names));
  return {
    async close() {
      await queues.close();
      redis.disconnect();
    },
  };
}
