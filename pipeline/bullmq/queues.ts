import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { redisUrlOf } from './redis-url.ts';
import type { Deps } from '../../core/deps.ts';
import { settlesBy } from '../poller.ts';
import type { QueueCounts } from '../runtime.ts';

/**
 * How long a stop waits on a Redis that does not answer before it lets go. BullMQ waits for such a Redis for
 * ever: its close, and any command on a connection that never became ready (taskforcesh/bullmq#4656). So a
 * worker asked to stop during an outage never stopped, and was killed at the end of its grace period
 * instead (decision 219). What was in flight is left as after a crash: jobs are handed back when their locks expire,
 * outbox rows handed over again (jobs converge when run twice).
 */
export const REDIS_STOP_WAIT_MS = 5000;

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

/** ioredis's states of a connection that was lost and not yet made again. */
const LOST_STATES = new Set(['close', 'reconnecting', 'end']);

/**
 * Queues for adding jobs. Their connection fails fast while Redis is down (no offline queue), so the relay
 * notices at once and leaves the rows in the outbox.
 */
export function openQueues(deps: Deps): {
  get(name: string): Queue;
  /** False once the connection to Redis was lost (reconnecting or ended): a command now would only wait. */
  connected(): boolean;
  close(until?: number): Promise<void>;
} {
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
    connected: () => !LOST_STATES.has(connection.status),
    /** Closes the queues, waiting on Redis until `until` (epoch ms) at most. */
    async close(until = Date.now() + REDIS_STOP_WAIT_MS) {
      await settlesBy(Promise.all([...queues.values()].map((q) => q.close())), until);
      connection.disconnect();
    },
  };
}
