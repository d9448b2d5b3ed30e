import type { JobsOptions } from 'bullmq';
import type { Deps } from '../../core/deps.ts';
import { byQueue, createPoller } from '../poller.ts';
import { jobOptionsFor } from '../retry.ts';
import { openQueues } from './queues.ts';

const ROWS_PER_LOOK = 500;

/**
 * Moves outbox rows to BullMQ with their deterministic job ids, then marks them sent; relays of several
 * workers never take the same row. With Redis down the rows wait; when it returns they flow. A crash between add and mark re-adds a job id BullMQ already has,
 * which it ignores (and the job converges if it ran anyway): nothing lost, nothing doubled.
 */
export function createOutboxRelay(
  deps: Deps,
  options: { pollMs: number; jobOptions?: JobsOptions } = { pollMs: 500 },
) {
  const log = deps.logger.child({ component: 'bull-relay' });
  const queues = openQueues(deps);
  let redisDown = false;

  async function handOver(): Promise<number> {
    // The store hands each row to one relay only, however many workers run this (docs/pipeline.md).
    return deps.store.outbox.handOver(ROWS_PER_LOOK, deps.clock.now(), async (rows) => {
      for (const [name, queueRows] of byQueue(rows)) {
        await queues.get(name).addBulk(
          queueRows.map((row) => ({
            name,
            data: JSON.parse(row.payload) as unknown,
            opts: { ...(options.jobOptions ?? jobOptionsFor(deps.config, name)), jobId: row.jobId },
          })),
        );
      }
    });
  }

  const poller = createPoller(
    () =>
      handOver().then(
        (n) => {
          if (redisDown) log.info('redis is back: the outbox flows again');
          redisDown = false;
          return { more: n === ROWS_PER_LOOK };
        },
        (err: unknown) => {
          if (!redisDown) log.warn({ err }, 'cannot reach redis: postings wait in the outbox');
          redisDown = true;
          return { more: false };
        },
      ),
    options.pollMs,
  );

  return {
    start: () => poller.start(),
    async stop(): Promise<void> {
      await poller.stop();
      await queues.close();
    },
    /** One hand-over now (tests and the CLI). */
    handOver,
    queues,
  };
}
