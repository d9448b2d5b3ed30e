import cronParser from 'cron-parser';
import type { Queue } from 'bullmq';
import type { Config } from '../../core/config.ts';
import type { Deps } from '../../core/deps.ts';
import { BUSINESS_TIMEZONE, businessDate, prevDay } from '../../core/time.ts';
import { RECON_NIGHTLY_QUEUE, reconNightlyJobId } from '../../core/queues.ts';
import { jobOptionsFor } from '../retry.ts';

/** The next time the nightly run fires after `after` (cron in Asia/Kuala_Lumpur). */
export function nextFireAt(cron: string, after: Date): Date {
  return cronParser.parseExpression(cron, { currentDate: after, tz: BUSINESS_TIMEZONE }).next().toDate();
}

/** The last time it fired at or before `now`. */
export function lastFireAt(cron: string, now: Date): Date {
  return cronParser.parseExpression(cron, { currentDate: now, tz: BUSINESS_TIMEZONE }).prev().toDate();
}

/** The business day a firing reconciles: the day before the Kuala Lumpur day it fires in. */
export const dayOfFiring = (firedAt: Date): string => prevDay(businessDate(firedAt));

/**
 * Embedded mode's scheduler: at each firing it puts the nightly job in the outbox (job id per day, so it
 * is added once), and the in-process relay runs it with the same processor and retries as Redis mode.
 * On start it also adds the last firing's day, so a laptop that was off at 00:30 still gets yesterday.
 */
export function createNightlyScheduler(deps: Deps) {
  let timer: NodeJS.Timeout | undefined;
  const log = deps.logger.child({ component: 'recon-scheduler' });

  const enqueue = async (day: string) => {
    await deps.store.outbox.enqueue(RECON_NIGHTLY_QUEUE, reconNightlyJobId(day), { day }, deps.clock.now());
  };
  const arm = () => {
    const at = nextFireAt(deps.config.recon.cron, deps.clock.now());
    // setTimeout holds at most ~24.8 days; a far cron simply re-arms.
    const delay = Math.min(Math.max(at.getTime() - Date.now(), 0), 2 ** 31 - 1);
    timer = setTimeout(() => {
      enqueue(dayOfFiring(at)).then(arm, (err: unknown) => {
        log.error({ err }, 'cannot schedule the nightly reconciliation');
        arm();
      });
    }, delay);
    timer.unref();
  };

  return {
    async start(): Promise<void> {
      await enqueue(dayOfFiring(lastFireAt(deps.config.recon.cron, deps.clock.now())));
      arm();
    },
    stop(): void {
      clearTimeout(timer);
    },
  };
}

/**
 * Redis mode: one BullMQ job scheduler (cron with its timezone) shared by every worker. Idempotent: the
 * workers' reconciler re-asserts it at every pass, so a Redis that lost it gets it back.
 */
export async function upsertNightlyScheduler(queue: Queue, config: Config): Promise<void> {
  const { attempts, backoff } = jobOptionsFor(config, RECON_NIGHTLY_QUEUE);
  await queue.upsertJobScheduler(
    'recon-nightly',
    { pattern: config.recon.cron, tz: BUSINESS_TIMEZONE },
    { name: RECON_NIGHTLY_QUEUE, data: {}, opts: { attempts, backoff } },
  );
}
