import { claimStore, createDeps } from '../core/bootstrap.ts';
import { ConfigError } from '../core/config.ts';
import { waitForStore } from '../core/store/wait-for-store.ts';
import { createBullRuntime } from '../pipeline/bullmq/runtime.ts';
import { createEnquirySweep } from '../pipeline/enquiry.ts';
import { createStoreUpkeep } from '../pipeline/store-upkeep.ts';
import { createNightlyScheduler } from '../pipeline/recon/scheduler.ts';
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
  // A database not up yet is waited for: a worker started before it comes up with it.
  await waitForStore(deps.store, deps.logger);
  await claimStore(deps.store, deps.config, deps.clock.now());
  const runtime = createBullRuntime(deps, {
    pollMs: deps.config.pipeline.pollMs,
    withWorkers: true,
    nightlyScheduler: true,
  });
  runtime.start();
  const sweep = createEnquirySweep(deps);
  sweep.start();
  const upkeep = createStoreUpkeep(deps);
  upkeep.start();
  // Every worker owes the night's run in the outbox (one row per day, however many workers): decision 274.
  const nightly = createNightlyScheduler(deps, { catchUp: 'established' });
  await nightly.start();
  deps.logger.info({ queues: pipelineQueueNames(deps.config) }, 'worker started');
  return async () => {
    await nightly.stop();
    await runtime.stop();
    await sweep.stop();
    await upkeep.stop();
    deps.mailer.close();
    await deps.callbacks.close();
    await deps.store.close();
  };
}
