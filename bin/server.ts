/** The web process: every host's routes, on one port by default. */
import { claimStore, seedDemoData } from '../core/bootstrap.ts';
import { listen } from '../core/http/serve.ts';
import { waitForStore } from '../core/store/wait-for-store.ts';
import { createEnquirySweep } from '../pipeline/enquiry.ts';
import { createStoreUpkeep } from '../pipeline/store-upkeep.ts';
import { createNightlyScheduler } from '../pipeline/recon/scheduler.ts';
import { createInProcessRuntime } from '../pipeline/in-process-runtime.ts';
import { observePipeline } from '../pipeline/observe.ts';
import { createApp } from './create-app.ts';
import { runMain } from './run-main.ts';

await runMain(async () => {
  let shuttingDown = false;
  // Bull Board (Redis mode, behind the admin password) lives on the reports host.
  const app = createApp(undefined, {}, { isShuttingDown: () => shuttingDown, queueBoard: true });
  const { deps } = app;
  const { config, logger } = deps;
  // A database not up yet is waited for (the checks below need it); one that fails otherwise stops here.
  await waitForStore(deps.store, logger);
  // Production's store: refused to any other process, and by production while a demo secret is valid.
  await claimStore(deps.store, config, deps.clock.now());
  if (config.seedDemo) await seedDemoData(deps.store, deps.clock.now());

  // Readiness checks Redis, and the metrics read the queues, before the first request.
  const observed = await observePipeline(deps);
  const listening = await listen(app.web);
  for (const server of listening.servers) logger.info({ hosts: server.name, url: server.url }, 'listening');
  // Where a new user goes next (the README's quick start): the landing page and the demo shop.
  // The address it really listens on (a port of 0 is only known now).
  const base = listening.servers.find((server) => server.name.split('+').includes('base'))?.url;
  if (config.seedDemo && base) {
    logger.info({ landing: `${base}/`, shop: `${base}/demo/shop` }, `open in a browser: ${base}/`);
  }
  // Say at once what payers will meet: no acquirer, or a sandbox that moves no money (docs/acquirers.md).
  if (!deps.acquirer) {
    logger.warn(
      'payments are not configured (ACQUIRER=none): checkout, pay pages and pay-link QR codes answer 503; see docs/acquirers.md',
    );
  } else if (deps.acquirer.sandbox) {
    logger.warn('payments go to the SANDBOX acquirer: no money moves (pages and callbacks say so)');
  }
  // Embedded mode: the pipeline's jobs run in this process, fed from the outbox. With REDIS_URL set, worker
  // processes (npm run worker) run them instead.
  const relay = config.redisUrl
    ? undefined
    : createInProcessRuntime(deps, { pollMs: config.pipeline.pollMs });
  relay?.start();
  // Redis mode: the workers hear of the rows this process commits at once (decision 220).
  const wakes = config.redisUrl
    ? (await import('../pipeline/bullmq/wakes.ts')).publishWakes(deps)
    : undefined;
  const sweep = config.redisUrl ? undefined : createEnquirySweep(deps);
  sweep?.start();
  const upkeep = config.redisUrl ? undefined : createStoreUpkeep(deps);
  upkeep?.start();
  const nightly = config.redisUrl ? undefined : createNightlyScheduler(deps);
  await nightly?.start();

  return async () => {
    shuttingDown = true;
    await listening.close(config.shutdownGraceMs);
    await relay?.stop();
    wakes?.close();
    await sweep?.stop();
    await upkeep?.stop();
    await nightly?.stop();
    await observed.close();
    await app.close();
  };
});
