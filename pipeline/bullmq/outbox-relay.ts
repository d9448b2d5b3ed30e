import type { JobsOptions, Queue } from 'bullmq';
import type { Deps } from '../../core/deps.ts';
import type { OutboxRow } from '../../core/store/index.ts';
import { byQueue, createPoller, settlesBy } from '../poller.ts';
import { jobOptionsFor } from '../retry.ts';
import { openQueues, REDIS_STOP_WAIT_MS } from './queues.ts';
import { isStoreOutage } from '../../core/store/outage.ts';

const ROWS_PER_LOOK = 500;

/**
 * How long a hand-over waits on a Redis that takes commands and does not answer them before it counts it as
 * down. BullMQ would wait for ever (taskforcesh/bullmq#4656), and the store holds the rows meanwhile: on
 * PostgreSQL in an open transaction, idle, with their row locks.
 */
const REDIS_ANSWER_WAIT_MS = 5000;

/** The shortest time between two hand-overs that wakes ask for (decision 220). */
const RELAY_WAKE_GAP_MS = 100;

/** What the relay logs when a hand-over fails, by cause, and when one goes through again after. */
const STOPPED_BY = {
  redis: 'cannot reach redis: postings wait in the outbox',
  store: 'cannot read the outbox from the store: postings wait in it',
  failing: 'the hand-over to redis failed: postings wait in the outbox',
};
const RESUMED_AFTER = {
  redis: 'redis is back',
  store: 'the store answers again',
  failing: 'the hand-over works again',
};

/** Redis could not take the hand-over (as opposed to the store, which the hand-over reads and marks). */
class RedisUnreachable extends Error {}

/** Rethrows `error` unless Redis answers: a queue that refuses a job is told apart from a Redis that is down. */
async function stillReachable(queue: Queue, error: unknown): Promise<void> {
  await queue
    .getJobCounts('wait')
    .catch(() => Promise.reject(new RedisUnreachable('redis does not answer', { cause: error })));
}

/**
 * Moves outbox rows to BullMQ with their deterministic job ids, then marks them sent; relays of several
 * workers never take the same row. With Redis down the rows wait, and the relay says so once (and which of
 * Redis and the store it cannot reach); when it returns they flow. A crash between add and mark re-adds a
 * job id BullMQ already has, which it ignores (and the job converges if it ran anyway): nothing lost,
 * nothing doubled.
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
  /** What stops the hand-over now, said once when it starts and once when it ends. */
  let down: keyof typeof STOPPED_BY | undefined;

  /** Adds the rows' jobs to their queues; the rows a queue refused for good, with why. */
  async function send(rows: readonly OutboxRow[]): Promise<Map<number, string>> {
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
      } catch (bulkError: unknown) {
        // One job BullMQ refuses (an id it cannot take) fails the whole bulk: find it, so that it fails
        // alone and the rows behind it flow. A Redis that is down fails the look instead: nothing marked.
        await stillReachable(queue, bulkError);
        for (const row of queueRows) {
          const job = jobOf(row);
          await queue.add(name, job.data, job.opts).catch(async (err: unknown) => {
            await stillReachable(queue, err);
            const why = err instanceof Error ? err.message : String(err);
            log.error({ queue: name, job_id: row.jobId, err }, 'the queue refused a job: failed for good');
            refused.set(row.id, why);
          });
        }
      }
    }
    return refused;
  }

  async function handOver(): Promise<number> {
    // The store hands each row to one relay only, however many workers run this (docs/pipeline.md).
    return deps.store.outbox.handOver(
      ROWS_PER_LOOK,
      deps.clock.now(),
      async (rows) => {
        // A Redis known to be down is not asked: the rows stay in the outbox, and the store lets go of them.
        if (!queues.connected()) throw new RedisUnreachable('the connection to redis is down');
        const sending = send(rows);
        if (!(await settlesBy(sending, Date.now() + REDIS_ANSWER_WAIT_MS))) {
          // Left to finish on its own (settlesBy heard its failure, if any): a job it adds later is added
          // again by the next hand-over, and ignored.
          throw new RedisUnreachable(`redis did not answer within ${REDIS_ANSWER_WAIT_MS} ms`);
        }
        return sending;
      },
      options.except,
    );
  }

  const poller = createPoller(
    () =>
      handOver().then(
        (n) => {
          if (down) log.info(`${RESUMED_AFTER[down]}: the outbox flows again`);
          down = undefined;
          return { more: n === ROWS_PER_LOOK };
        },
        (err: unknown) => {
          // Which one is down decides where ops look first: a PostgreSQL outage is not a Redis one.
          const now = err instanceof RedisUnreachable ? 'redis' : isStoreOutage(err) ? 'store' : 'failing';
          if (down !== now) log[now === 'failing' ? 'error' : 'warn']({ err }, STOPPED_BY[now]);
          down = now;
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
