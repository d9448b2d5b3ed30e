import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createApp } from '../../bin/create-app.ts';
import { listen } from '../../core/http/serve.ts';
import { createLogger } from '../../core/logger.ts';
import { onCleanup, tempDir } from '../helpers.ts';

/** The app createApp composes over a temp store, every app listening on a free loopback port. */
async function started(t: Parameters<typeof tempDir>[0], env: Record<string, string>, onePort = false) {
  const app = createApp(
    { NODE_ENV: 'test', DATA_DIR: tempDir(t), HOST: '127.0.0.1', ...env },
    { logger: createLogger('silent') },
    { onePort },
  );
  const listening = await listen(app.web.map((web) => ({ ...web, port: 0 })));
  onCleanup(t, async () => {
    await listening.close(1000);
    await app.close();
  });
  const urls = Object.fromEntries(listening.servers.map((s) => [s.name, s.url]));
  return { app, urls };
}

test('createApp gives a host with a port of its own an app of its own, and the other hosts one app on PORT', async (t) => {
  const { app, urls } = await started(t, { PORT: '4100', REPORTS_PORT: '4101' });
  assert.deepEqual(
    app.web.map((web) => [web.name, web.port, web.setting]),
    [
      ['reports', 4101, 'REPORTS_PORT'],
      ['base+pay', 4100, 'PORT'],
    ],
  );
  const version = (url: string | undefined) => fetch(`${url}/api/version`).then((r) => r.status);
  assert.equal(await version(urls.reports), 200, 'the reports host serves its routes on its own port');
  assert.equal(await version(urls['base+pay']), 404, 'and no longer on the shared one');
});

test('onePort puts every host on one app on PORT, whatever the host ports say', async (t) => {
  const { app, urls } = await started(t, { PORT: '4100', REPORTS_PORT: '4101' }, true);
  assert.deepEqual(
    app.web.map((web) => [web.name, web.port]),
    [['base+reports+pay', 4100]],
  );
  const status = (path: string) => fetch(`${urls['base+reports+pay']}${path}`).then((r) => r.status);
  assert.equal(await status('/api/version'), 200, 'a reports route');
  assert.equal(await status('/api/bank/webhook'), 405, 'a pay route (GET is not its method)');
});
