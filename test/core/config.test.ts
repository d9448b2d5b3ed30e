import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../core/config.ts';

test('defaults: one port 3000, ./data, demo seeding on, the three bank agency codes', () => {
  const config = loadConfig({});
  assert.equal(config.port, 3000);
  assert.equal(
    config.host,
    '127.0.0.1',
    'embedded mode carries demo secrets: loopback unless told otherwise',
  );
  assert.equal(config.adminPassword, 'demo-admin-password');
  assert.deepEqual(config.hostPorts, {});
  assert.equal(config.dataDir, path.resolve('data'));
  assert.equal(config.databaseFile, path.resolve('data/amil.db'));
  assert.equal(config.seedDemo, true);
  assert.equal(config.webhook.maxBodyBytes, 5 * 1024 * 1024);
  assert.equal(config.webhook.maxRecords, 5000);
  assert.deepEqual(config.webhook.routes, {
    BANKLZS: { kind: 'agency', agency: 'LZS' },
    BANKPPZ: { kind: 'agency', agency: 'PPZ' },
    BANK: { kind: 'test' },
  });
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.webhook.routes));
});

test('each host may get a port of its own', () => {
  const config = loadConfig({ PAY_PORT: '4001', REPORTS_PORT: '4002' });
  assert.deepEqual(config.hostPorts, { pay: 4001, reports: 4002 });
});

test('every problem is listed at once', () => {
  assert.throws(
    () =>
      loadConfig({
        PORT: '-1',
        NODE_ENV: 'staging',
        LOG_LEVEL: 'verbose',
        SEED_DEMO: 'maybe',
        BANK_AGENCY_ROUTES: 'BANKLZS=LZS,garbage',
      }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.problems.length, 5, err.message);
      return true;
    },
  );
});

test('production refuses demo seeding and defaults it off', () => {
  const secret = { REPORT_TOKEN_SECRET: 'a-real-secret-of-at-least-32-characters' };
  assert.equal(loadConfig({ NODE_ENV: 'production', ...secret }).seedDemo, false);
  assert.throws(
    () => loadConfig({ NODE_ENV: 'production' }),
    /REPORT_TOKEN_SECRET is required in production/,
  );
  assert.throws(
    () => loadConfig({ NODE_ENV: 'production', SEED_DEMO: 'true' }),
    /SEED_DEMO must not be true/,
  );
});

test('the demo admin password is refused off loopback and in production; a bad REDIS_URL is not echoed', () => {
  assert.equal(
    loadConfig({ HOST: '0.0.0.0' }).adminPassword,
    undefined,
    'admin pages off, not open with the demo password',
  );
  assert.throws(() => loadConfig({ HOST: '0.0.0.0', ADMIN_PASSWORD: 'demo-admin-password' }), /non-loopback/);
  assert.throws(
    () => loadConfig({ NODE_ENV: 'production', ADMIN_PASSWORD: 'demo-admin-password' }),
    /production/,
  );
  assert.throws(
    () => loadConfig({ REDIS_URL: 'http://:hunter2secret@redis' }),
    (err: Error) => /REDIS_URL must look like/.test(err.message) && !err.message.includes('hunter2secret'),
  );
});

test('a bank agency code named twice is refused', () => {
  assert.throws(() => loadConfig({ BANK_AGENCY_ROUTES: 'BANK=test,BANK=LZS' }), /names BANK twice/);
});
