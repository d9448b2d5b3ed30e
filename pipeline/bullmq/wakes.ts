import { Redis } from 'ioredis';
import type { Deps } from '../../core/deps.ts';
import { outboxSignal } from '../../core/store/index.ts';
import { redisUrlOf } from './redis-url.ts';

/**
 * Redis mode across processes (decision 220): the web process publishes the queues whose rows it committed
 * (a payment's callback, a bank batch's normalise job), and every worker hears it and looks at the outbox at
 * once, rather than at its next poll. A hint over Redis pub/sub: lost while Redis is away, and then the
 * workers' polls find the rows as before, so Redis still holds nothing back.
 */
/** The Redis channel the wakes of one deployment (its QUEUE_PREFIX) go on; the queue names are the message. */
export function wakeChannel(queuePrefix: string): string {
  return `${queuePrefix}:outbox-written`;
}

/** Publishes what this process's store announces; close() stops. Never waits on Redis: a hint is dropped. */
export function publishWakes(deps: Deps): { close(): void } {
  // No offline queue and one try: while Redis is away a publish fails at once and is dropped, never kept.
  const connection = new Redis(redisUrlOf(deps), { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  connection.on('error', () => undefined); // the workers' polls cover a lost hint; the relay logs the outage
  const channel = wakeChannel(deps.config.queuePrefix);
  const unlisten = outboxSignal.listen((queues) => {
    connection.publish(channel, [...queues].join(',')).catch(() => undefined);
  });
  return {
    close() {
      unlisten();
      connection.disconnect();
    },
  };
}

/**
 * Publishes once what a short-lived process (an `amil` command) committed, then disconnects: its own
 * process has no workers to wake. A hint: a Redis that is away costs the workers' next poll, never an error.
 */
export async function publishWakeOnce(deps: Deps, queues: readonly string[]): Promise<void> {
  const connection = new Redis(redisUrlOf(deps), {
    maxRetriesPerRequest: 0,
    retryStrategy: () => null, // one connection attempt
    connectTimeout: 2000,
  });
  connection.on('error', () => undefined);
  try {
    await connection.publish(wakeChannel(deps.config.queuePrefix), queues.join(','));
  } catch {
    // dropped: the workers' polls find the rows
  } finally {
    connection.disconnect();
  }
}

/** Calls `wake` with the queues a web process announced; close() stops. */
export function subscribeWakes(deps: Deps, wake: (queues: ReadonlySet<string>) => void): { close(): void } {
  const connection = new Redis(redisUrlOf(deps), { maxRetriesPerRequest: null });
  connection.on('error', () => undefined); // it reconnects and subscribes again by itself (ioredis)
  const channel = wakeChannel(deps.config.queuePrefix);
  connection.subscribe(channel).catch(() => undefined);
  connection.on('message', (from: string, message: string) => {
    if (from === channel) wake(new Set(message.split(',')));
  });
  return {
    close() {
      connection.disconnect();
    },
  };
}
