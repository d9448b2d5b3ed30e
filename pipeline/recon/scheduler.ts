import cronParser from 'cron-parser';
import type { Queue } from 'bullmq';
import type { Deps } from '../../core/deps.ts';
import { BUSINESS_TIMEZONE, businessDate, prevDay } from '../../core/time.ts';
import { RECON_NIGHTLY_QUEUE, reconNightlyJobId } from '../../core/queues.ts';

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

/** How often, between firings, the scheduler makes sure the last firing's day is owed in the outbox. */
const NIGHTLY_CHECK_MS = 60_000;
/** How long after a firing its tick comes: the last firing is then that one, whatever the clock's grain. */
const AFTER_FIRING_MS = 1000;

/**
 * The nightly run's scheduler, in embedded mode's web process and in every worker (Redis mode): it puts the
 * day of the last firing in the outbox (job id per day, so it is added once however many processes do it)
 * just after each firing and every minute between. The outbox row is what makes a night's run owed: a store
 * that could not write at the firing is tried again a minute later, and in Redis mode a Redis that lost the
 * job gets it back from the row (the reconciler), with its day fixed at the firing (decision 274).
 *
 * A firing before the process started is caught up too (a laptop that was off at 00:30, every worker
 * down): always in embedded mode (`catchUp: 'always'`); in Redis mode only on a store that has recorded a
 * nightly run (`'established'`), so that the first workers of a new deployment do not mail every agency a
 * workbook of the day before it went live.
 */
export function createNightlyScheduler(
  deps: Deps,
  options: { catchUp: 'always' | 'established' } = { catchUp: 'always' },
) {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let failing = false;
  const log = deps.logger.child({ component: 'recon-scheduler' });
  let since = deps.clock.now();
  // Undecided until the store says whether it is established: a failed read is asked again at the next tick.
  let catchUp: boolean | undefined = options.catchUp === 'always' ? true : undefined;
  let inFlight: Promise<void> | undefined;

  const owe = async () => {
    const now = deps.clock.now();
    const fired = lastFireAt(deps.config.recon.cron, now);
    catchUp ??= await deps.store.reconRuns.anyNightly();
    if (!catchUp && fired < since) return;
    const day = dayOfFiring(fired);
    await deps.store.outbox.enqueue(RECON_NIGHTLY_QUEUE, reconNightlyJobId(day), { day }, now);
  };
  const tick = () =>
    (inFlight = owe().then(
      () => {
        if (failing) log.info('the nightly reconciliation is in the outbox again');
        failing = false;
      },
      (err: unknown) => {
        if (!failing) log.error({ err }, 'cannot put the nightly reconciliation in the outbox: trying again');
        failing = true;
      },
    ));
  const arm = () => {
    if (stopped) return;
    const now = deps.clock.now();
    const untilFiring = nextFireAt(deps.config.recon.cron, now).getTime() - now.getTime();
    timer = setTimeout(
      () => void tick().then(arm),
      Math.min(untilFiring + AFTER_FIRING_MS, NIGHTLY_CHECK_MS),
    );
    timer.unref();
  };

  return {
    async start(): Promise<void> {
      stopped = false;
      since = deps.clock.now();
      await tick();
      arm();
    },
    /** Stops the timer; resolves once a tick in flight has written (the store may close after). */
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}

/** The BullMQ job scheduler of the nightly run that releases before decision 274 kept in Redis. */
const LEGACY_SCHEDULER = 'recon-nightly';

/**
 * Removes that job scheduler (Redis mode, at each pass of a worker's reconciler: during a rolling upgrade
 * the workers of the release before re-create it): the nightly run is owed in the outbox now, and the
 * scheduler's firings (with no day) would run beside it.
 */
export async function removeLegacyNightlyScheduler(queue: Queue): Promise<void> {
  await queue.removeJobScheduler(LEGACY_SCHEDULER);
}
