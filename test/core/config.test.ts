import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ConfigError, DEMO_PAY_LINK_SECRET, loadConfig } from '../../core/config.ts';

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

/** What production needs besides NODE_ENV (its own secrets and public origins). */
const PRODUCTION = {
  NODE_ENV: 'production',
  REPORT_TOKEN_SECRET: 'a-real-secret-of-at-least-32-characters',
  PAY_LINK_SECRET: 'another-real-secret-of-32-characters-or-more',
  PUBLIC_BASE_URL: 'https://pay.amil.example.my',
  PUBLIC_REPORTS_URL: 'https://api.amil.example.my',
};

test('production refuses demo seeding and defaults it off', () => {
  assert.equal(loadConfig(PRODUCTION).seedDemo, false);
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

test('public URLs default to where embedded mode listens: the shared port, or a host of its own', () => {
  assert.deepEqual(loadConfig({}).publicUrls, {
    base: 'http://127.0.0.1:3000',
    reports: 'http://127.0.0.1:3000',
  });
  assert.deepEqual(loadConfig({ PORT: '3917', REPORTS_PORT: '4002' }).publicUrls, {
    base: 'http://127.0.0.1:3917',
    reports: 'http://127.0.0.1:4002',
  });
  assert.deepEqual(loadConfig({ HOST: '0.0.0.0', BASE_PORT: '4001' }).publicUrls, {
    base: 'http://127.0.0.1:4001',
    reports: 'http://127.0.0.1:3000',
  });
  assert.equal(loadConfig({ HOST: '::1' }).publicUrls.base, 'http://[::1]:3000');
});

test('a public URL is an http(s) origin: given with a trailing slash it is normalised, with a path it is refused', () => {
  const config = loadConfig({
    PUBLIC_BASE_URL: 'https://Pay.Amil.Example.MY/',
    PUBLIC_REPORTS_URL: 'http://10.0.0.5:8080',
  });
  assert.deepEqual(config.publicUrls, {
    base: 'https://pay.amil.example.my',
    reports: 'http://10.0.0.5:8080',
  });
  for (const bad of [
    'pay.amil.example.my',
    'ftp://pay.amil.example.my',
    'https://pay.amil.example.my/amil',
    'https://user:pw@pay.amil.example.my',
    'https://pay.amil.example.my/?a=1',
    'https://pay.amil.example.my#top',
  ]) {
    assert.throws(
      () => loadConfig({ PUBLIC_BASE_URL: bad }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.length === 1 &&
        /PUBLIC_BASE_URL must be an http\(s\) origin/.test(err.message),
      bad,
    );
  }
});

test('production requires its own pay-link secret and public URLs; the secret is at least 32 characters', () => {
  assert.equal(loadConfig(PRODUCTION).payLinkSecret, PRODUCTION.PAY_LINK_SECRET);
  assert.equal(loadConfig({}).payLinkSecret, DEMO_PAY_LINK_SECRET, 'a demo secret outside production');
  for (const name of ['PAY_LINK_SECRET', 'PUBLIC_BASE_URL', 'PUBLIC_REPORTS_URL'] as const) {
    const { [name]: _missing, ...rest } = PRODUCTION;
    assert.throws(() => loadConfig(rest), new RegExp(`${name} is required in production`));
  }
  assert.throws(
    () => loadConfig({ ...PRODUCTION, PAY_LINK_SECRET: DEMO_PAY_LINK_SECRET }),
    /PAY_LINK_SECRET must not be the demo secret in production/,
  );
  assert.throws(() => loadConfig({ PAY_LINK_SECRET: 'short' }), /PAY_LINK_SECRET needs at least 32/);
});

test('the QR PNG lifetime is 90 days unless set, within 1 to 3650', () => {
  assert.equal(loadConfig({}).qr.pngTtlDays, 90);
  assert.equal(loadConfig({ QR_PNG_TTL_DAYS: '7' }).qr.pngTtlDays, 7);
  assert.throws(() => loadConfig({ QR_PNG_TTL_DAYS: '0' }), /QR_PNG_TTL_DAYS must be an integer from 1/);
});

test('reconciliation: the nightly cron, bank-test recipients and SMTP_URL are checked; unset SMTP writes .eml files', () => {
  const config = loadConfig({ DATA_DIR: '/tmp/amil-config' });
  assert.equal(config.recon.cron, '30 0 * * *');
  assert.deepEqual(config.recon.bankTestRecipients, []);
  assert.equal(config.recon.dir, '/tmp/amil-config/reconciliation');
  assert.equal(config.mail.smtpUrl, undefined);
  assert.equal(config.mail.dir, '/tmp/amil-config/mail');
  const set = loadConfig({
    RECON_CRON: '0 1 * * 1-5',
    BANK_TEST_RECIPIENTS: 'ops@bank.example.my, it@bank.example.my',
    SMTP_URL: 'smtps://user:secret@mail.example.my:465',
  });
  assert.deepEqual(set.recon.bankTestRecipients, ['ops@bank.example.my', 'it@bank.example.my']);
  assert.equal(set.mail.smtpUrl, 'smtps://user:secret@mail.example.my:465');
  assert.throws(
    () =>
      loadConfig({
        RECON_CRON: 'at half past midnight',
        BANK_TEST_RECIPIENTS: 'ops',
        SMTP_URL: 'http://mail',
      }),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.problems.length === 3 &&
      /RECON_CRON/.test(err.problems[0] ?? '') &&
      /BANK_TEST_RECIPIENTS: "ops"/.test(err.problems[1] ?? '') &&
      /SMTP_URL/.test(err.problems[2] ?? '') &&
      !err.message.includes('http://mail'),
  );
});

test('receipts come from MAIL_FROM unless RECEIPT_MAIL_FROM says otherwise, which must hold an address', () => {
  assert.equal(loadConfig({}).mail.receiptFrom, 'amil <reconciliation@amil.invalid>');
  assert.equal(
    loadConfig({ MAIL_FROM: 'LZS <noreply@lzs.example.my>' }).mail.receiptFrom,
    'LZS <noreply@lzs.example.my>',
  );
  assert.equal(
    loadConfig({ RECEIPT_MAIL_FROM: 'Resit LZS <resit@lzs.example.my>' }).mail.receiptFrom,
    'Resit LZS <resit@lzs.example.my>',
  );
  assert.equal(
    loadConfig({ RECEIPT_MAIL_FROM: 'resit@lzs.example.my' }).mail.receiptFrom,
    'resit@lzs.example.my',
  );
  assert.throws(() => loadConfig({ RECEIPT_MAIL_FROM: 'Resit LZS' }), /RECEIPT_MAIL_FROM must be an address/);
});
