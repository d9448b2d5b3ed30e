import type { JobsOptions, Queue } from 'bullmq';
import type { Deps } from '../../core/deps.ts';
import type { OutboxRow } from '../../core/store/index.ts';
import { byQueue, createPoller } from '../poller.ts';
import { jobOptionsFor } from '../retry.ts';
import { openQueues, REDIS_STOP_WAIT_MS } from './queues.ts';

const ROWS_PER_LOOK = 500;

/** The shortest time between two hand-overs that wakes ask for (decision 220). */
const RELAY_WAKE_GAP_MS = 100;

/** Rethrows `error` unless Redis answers: a queue that refuses a job is told apart from a Redis that is down. */
async function stillReachable(queue: Queue, error: unknown): Promise<void> {
  await queue.getJobCounts('wait').catch(() => Promise.reject(error as Error));
}

/**
 * Moves outbox rows to BullMQ with their deterministic job ids, then marks them sent; relays of several
 * workers never take the same row. With Redis down the rows wait; when it returns they flow. A crash between add and mark re-adds a job id BullMQ already has,
 * which it ignores (and the job converges if it ran anyway): nothing lost, nothing doubled.
 */
export function createOutboxRelay(
  deps: Deps,
  options: {
    pollMs: number;
    jobOptions?: JobsOptions;
    /** A queue the workers lease from the outbox themselves (decision 218): never handed to Redis. */
    except?: string;
  } = { pollMs: 500 },
) {
  const log = deps.logger.child({ component: 'bull-relay' });
  const queues = openQueues(deps);
  let redisDown = false;

  async function handOver(): Promise<number> {
    // The store hands each row to one relay only, however many workers run this (docs/pipeline.md).
    return deps.store.outbox.handOver(
      ROWS_PER_LOOK,
      deps.clock.now(),
      async (rows) => {
        const refused = new Map<number, string>();
        for (const [name, queueRows] of byQueue(rows)) {
          const queue = queues.get(name);
          const jobOf = (row: OutboxRow) => ({
            name,
            data: JSON.parse(row.payload) as unknown,
            opts: { ...(options.jobOptions ?? jobOptionsFor(deps.config, name)), jobId: row.jobId },
          });
          try {
            await queue.addBulk(queueRows.map(jobOf));
          } catch (bulkError) {
            // One job BullMQ refuses (an id it cannot take) fails the whole bulk: find it, so that it fails
            // alone and the rows behind it flow. A Redis that is down fails the look instead: nothing marked.
            await stillReachable(queue, bulkError);
            for (const row of queueRows) {
              const job = jobOf(row);
              await queue.add(name, job.data, job.opts).catch(async (err: unknown) => {
                await stillReachable(queue, err);
                const why = err instanceof Error ? err.message : String(err);
                log.error(
                  { queue: name, job_id: row.jobId, err },
                  'the queue refused a job: failed for good',
                );
                refused.set(row.id, why);
              });
            }
          }
        }
        return refused;
      },
      options.except,
    );
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
    /**
     * Hands over soon rather than at the next poll: rows were just committed (decision 220). At most every
     * RELAY_WAKE_GAP_MS: every worker's relay hears every web process's wake, and no payer waits on a
     * bank batch's jobs.
     */
    wake: () => poller.wake(RELAY_WAKE_GAP_MS),
    /** Stops handing over, waiting on Redis until `until` (epoch ms) at most. */
    async stop(until = Date.now() + REDIS_STOP_WAIT_MS): Promise<void> {
      await poller.stop(until);
      await queues.close(until);
    },
    /** One hand-over now (tests and the CLI). */
    handOver,
    queues,
  };
}
