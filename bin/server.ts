/** The web process: every host's routes, on one port by default. */
import { HOSTS, type HostName } from '../core/config.ts';
import { assertNoDemoSecrets, createDeps, seedDemoData } from '../core/bootstrap.ts';
import { listen } from '../core/http/serve.ts';
import { createWebApp } from '../ingest/web-app.ts';
import { createEnquirySweep } from '../pipeline/enquiry.ts';
import { createNightlyScheduler } from '../pipeline/recon/scheduler.ts';
import { createInProcessRelay } from '../pipeline/relay.ts';
import { queueBoard } from '../pipeline/queue-board.ts';
import { observePipeline } from '../pipeline/observe.ts';
import { runMain } from './run-main.ts';

await runMain(async () => {
  const deps = createDeps();
  const { config, logger } = deps;
  if (config.seedDemo) await seedDemoData(deps.store, deps.clock.now());
  if (config.nodeEnv === 'production') await assertNoDemoSecrets(deps.store);

  // Readiness checks Redis, and the metrics read the queues, before the first request.
  const observed = observePipeline(deps);
  let shuttingDown = false;
  const isShuttingDown = () => shuttingDown;
  // Bull Board (Redis mode, behind the admin password) lives on the reports host.
  const board = queueBoard(deps);
  const middlewareFor = (hosts: readonly HostName[]) =>
    board && hosts.includes('reports') ? [board.middleware] : [];
  const ownPort = HOSTS.filter((h) => config.hostPorts[h] !== undefined);
  const shared = HOSTS.filter((h) => config.hostPorts[h] === undefined);
  const entries = ownPort.map((host: HostName) => ({
    name: String(host),
    app: createWebApp(deps, [host], { isShuttingDown, middleware: middlewareFor([host]) }),
    host: config.host,
    port: config.hostPorts[host] ?? 0,
    setting: `${host.toUpperCase()}_PORT`,
  }));
  if (shared.length > 0) {
    entries.push({
      name: shared.join('+'),
      app: createWebApp(deps, shared, { isShuttingDown, middleware: middlewareFor(shared) }),
      host: config.host,
      port: config.port,
      setting: 'PORT',
    });
  }
  const listening = await listen(entries);
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
  const relay = config.redisUrl ? undefined : createInProcessRelay(deps);
  relay?.start();
  const sweep = config.redisUrl ? undefined : createEnquirySweep(deps);
  sweep?.start();
  const nightly = config.redisUrl ? undefined : createNightlyScheduler(deps);
  await nightly?.start();

  return async () => {
    shuttingDown = true;
    await listening.close(config.shutdownGraceMs);
    await relay?.stop();
    await sweep?.stop();
    nightly?.stop();
    deps.mailer.close();
    await board?.close();
    await observed.close();
    await deps.callbacks.close();
    await deps.qr.close();
    await deps.limits.close();
    deps.store.close();
  };
});
