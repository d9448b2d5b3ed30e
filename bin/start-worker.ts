import { createDeps } from '../core/bootstrap.ts';
import { ConfigError } from '../core/config.ts';
import { createBullRuntime, openQueues } from '../pipeline/bullmq.ts';
import { RECON_NIGHTLY_QUEUE } from '../pipeline/jobs/recon.ts';
import { upsertNightlyScheduler } from '../pipeline/recon/scheduler.ts';
import { createEnquirySweep } from '../pipeline/enquiry.ts';
import { pipelineQueueNames } from '../pipeline/queues.ts';

/**
 * A pipeline worker process (Redis mode): the outbox relay and a BullMQ worker per queue. Several may run
 * against one Redis and one database. Returns its stop function.
 */
export async function startWorker(): Promise<() => Promise<void>> {
  const deps = createDeps();
  if (!deps.config.redisUrl) {
    throw new ConfigError([
      'REDIS_URL is required by the worker (without it, embedded mode, the web process runs the pipeline itself)',
    ]);
  }
  const runtime = createBullRuntime(deps);
  runtime.start();
  const sweep = createEnquirySweep(deps);
  sweep.start();
  // The nightly reconciliation: one BullMQ job scheduler, whichever worker upserts it.
  const schedulerQueues = openQueues(deps);
  await upsertNightlyScheduler(schedulerQueues.get(RECON_NIGHTLY_QUEUE), deps.config.recon.cron);
  deps.logger.info({ queues: pipelineQueueNames(deps.config) }, 'worker started');
  return async () => {
    await runtime.stop();
    await sweep.stop();
    await schedulerQueues.close();
    deps.mailer.close();
    await deps.callbacks.close();
    deps.store.close();
  };
}
