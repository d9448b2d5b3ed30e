import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Deps } from '../../core/deps.ts';
import type { QueueCounts } from '../runtime.ts';

/** REDIS_URL, which Redis mode cannot run without. */
export function redisUrlOf(deps: Deps): string {
  const url = deps.config.redisUrl;
  if (!url) throw new Error('BullMQ needs REDIS_URL');
  return url;
}

/** BullMQ's job counts of each queue (prioritized jobs count as waiting). */
export function readQueueCounts(
  queues: { get(name: string): Queue },
  names: readonly string[],
): Promise<QueueCounts[]> {
  return Promise.all(
    names.map(async (queue) => {
      const c = await queues
        .get(queue)
        .getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized');
      return {
        queue,
        waiting: (c.waiting ?? 0) + (c.prioritized ?? 0),
        active: c.active ?? 0,
        delayed: c.delayed ?? 0,
        failed: c.failed ?? 0,
        completed: c.completed ?? 0,
      };
    }),
  );
}

/**
 * Queues for adding jobs. Their connection fails fast while Redis is down (no offline queue), so the relay
 * notices at once and leaves the rows in the outbox.
 */
export function openQueues(deps: Deps): { get(name: string): Queue; close(): Promise<void> } {
  const connection = new Redis(redisUrlOf(deps), { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  connection.on('error', () => undefined); // reported by the failing calls themselves
  const queues = new Map<string, Queue>();
  return {
    get(name) {
      let queue = queues.get(name);
      if (!queue) {
        queue = new Queue(name, { connection, prefix: deps.config.queuePrefix });
        queue.on('error', () => undefined);
        queues.set(name, queue);
      }
      return queue;
    },
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
      connection.disconnect();
    },
  };
}
