import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bankRecord, DEMO_PASSWORD, problemOf, startApp, type TestApp } from '../helpers.ts';
import { appDb } from '../support/app-db.ts';
import { startPostgres } from '../support/postgres.ts';
import { hashPassword, verifyPassword } from '../../core/passwords.ts';
import { loadConfig } from '../../core/config.ts';
import type { DomainError } from '../../core/errors.ts';
import { createRateLimits } from '../../core/http/rate-limit.ts';
import { createLogger } from '../../core/logger.ts';
import { createPartnerAuthenticator } from '../../ingest/partner-auth.ts';

test('a partner can rotate: old and new passwords both work until the old one is revoked', async (t) => {
  const app = await startApp(t);
  const { partners } = app.deps.store;
  const fresh = 'new-partner-password-0123456789';
  await partners.addPassword({
    partnerId: 'demo-bank',
    label: 'rotation',
    hash: await hashPassword(fresh),
    now: new Date(),
  });

  const send = (password: string) =>
    app.postBatch({ transactions: [bankRecord()] }, { 'x-api-password': password });
  assert.equal((await send(DEMO_PASSWORD)).status, 200);
  assert.equal((await send(fresh)).status, 200);

  // The old password was verified (and cached) above; revocation must still take effect at once.
  assert.equal(await partners.revokePasswords({ partnerId: 'demo-bank', label: 'demo', now: new Date() }), 1);
  assert.equal((await send(DEMO_PASSWORD)).status, 401);
  assert.equal((await send(fresh)).status, 200);
});

test('passwords are stored only as salted scrypt hashes', async (t) => {
  const app = await startApp(t);
  await app.deps.store.partners.addPassword({
    partnerId: 'other-bank',
    label: 'one',
    hash: await hashPassword(DEMO_PASSWORD),
    now: new Date(),
  });
  const rows = await appDb(t, app).rows<{ hash: string }>('SELECT hash FROM partner_passwords');
  const hashes = rows.map((r) => r.hash);
  assert.equal(hashes.length, 2);
  for (const hash of hashes) {
    assert.match(hash, /^scrypt\$16384\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    assert.ok(!hash.includes(DEMO_PASSWORD));
  }
  assert.notEqual(hashes[0], hashes[1], 'the same password hashes differently under different salts');
});

test('postings are kept per partner: the same orderno from two partners is two postings', async (t) => {
  const app = await startApp(t);
  const other = 'other-bank-password-0123456789';
  await app.deps.store.partners.addPassword({
    partnerId: 'other-bank',
    label: 'one',
    hash: await hashPassword(other),
    now: new Date(),
  });
  const record = bankRecord();
  assert.equal((await app.postBatch({ transactions: [record] })).status, 200);
  const response = await app.postBatch({ transactions: [record] }, { 'x-api-password': other });
  const body = (await response.json()) as { results: { outcome: string }[] };
  assert.equal(body.results[0]?.outcome, 'accepted');
  assert.ok(await app.deps.store.bankPostings.get('other-bank', record.orderno));
  assert.ok(await app.deps.store.bankPostings.get('demo-bank', record.orderno));
});

/** An authenticator over the app's store that counts scrypt verifications, with its own failure budget. */
function countingAuthenticator(app: TestApp, maxFailures: string) {
  const config = loadConfig({
    NODE_ENV: 'test',
    ...app.storeEnv,
    PARTNER_AUTH_MAX_FAILURES: maxFailures,
  });
  const limits = createRateLimits(config, createLogger('silent'));
  const counter = { scrypts: 0 };
  const authenticate = createPartnerAuthenticator(app.deps.store, {
    failures: limits.partnerAuthFailures,
    verify: (password, hash) => {
      counter.scrypts += 1;
      return verifyPassword(password, hash);
    },
  });
  return { authenticate, counter };
}

test('past its budget of wrong passwords a client gets 429 before any scrypt; other clients and a known good password still pass', async (t) => {
  const app = await startApp(t);
  const { authenticate, counter } = countingAuthenticator(app, '3');
  for (let i = 1; i <= 3; i += 1) assert.equal(await authenticate(`wrong-${i}`, '203.0.113.1'), undefined);
  assert.equal(counter.scrypts, 3);

  await assert.rejects(authenticate('wrong-4', '203.0.113.1'), (err: DomainError) => {
    assert.equal(err.code, 'too-many-requests');
    assert.ok(Number(err.extraHeaders['Retry-After']) >= 1);
    return true;
  });
  assert.equal(counter.scrypts, 3, 'refused before any scrypt');

  assert.equal(await authenticate('wrong-5', '198.51.100.1'), undefined, 'another client is checked');
  assert.equal(await authenticate(DEMO_PASSWORD, '198.51.100.1'), 'demo-bank');
  // Verified once, the good password passes from the limited client too, without scrypt.
  const before = counter.scrypts;
  assert.equal(await authenticate(DEMO_PASSWORD, '203.0.113.1'), 'demo-bank');
  assert.equal(counter.scrypts, before);
});

test('the same wrong password sent again costs no scrypt, until a password is added', async (t) => {
  const app = await startApp(t);
  const { authenticate, counter } = countingAuthenticator(app, '0');
  for (let i = 0; i < 20; i += 1)
    assert.equal(await authenticate('same-wrong-value', '203.0.113.2'), undefined);
  assert.equal(counter.scrypts, 1);

  // A partner who sent its new password a moment before it was added is not kept out.
  await app.deps.store.partners.addPassword({
    partnerId: 'demo-bank',
    label: 'new',
    hash: await hashPassword('same-wrong-value'),
    now: new Date(),
  });
  assert.equal(await authenticate('same-wrong-value', '203.0.113.2'), 'demo-bank');
});

test('a good password is verified once and then served from the cache', async (t) => {
  const app = await startApp(t);
  const { authenticate, counter } = countingAuthenticator(app, '3');
  for (let i = 0; i < 10; i += 1) assert.equal(await authenticate(DEMO_PASSWORD, '203.0.113.3'), 'demo-bank');
  assert.equal(counter.scrypts, 1);
});

test('the webhook answers 429 problem+json with Retry-After to a client past its budget of wrong passwords', async (t) => {
  const app = await startApp(t, { PARTNER_AUTH_MAX_FAILURES: '2' });
  const send = (password: string) =>
    app.postBatch({ transactions: [bankRecord()] }, { 'x-api-password': password });
  assert.equal((await send('wrong-a')).status, 401);
  assert.equal((await send('wrong-b')).status, 401);
  const refused = await send('wrong-c');
  assert.equal(refused.status, 429);
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  assert.equal((await problemOf(refused)).type, 'https://docs.amil.my/problems/too-many-requests');
  assert.equal((await send(DEMO_PASSWORD)).status, 429, 'not yet verified: refused like any other value');
});

test("64 concurrent wrong passwords from 64 clients leave libuv's pool to other work", async (t) => {
  const app = await startApp(t, { TRUST_PROXY: 'true' });
  const file = path.join(app.dataDir, 'probe.txt');
  await writeFile(file, 'x');
  const flood = Array.from({ length: 64 }, (_, i) =>
    app.postBatch({ transactions: [] }, { 'x-api-password': `wrong-${i}`, 'x-forwarded-for': `10.0.0.${i}` }),
  );
  // A file read runs on the same pool as scrypt: with every thread on scrypt it waits for the whole flood.
  await new Promise((resolve) => setTimeout(resolve, 20));
  let slowest = 0;
  for (let i = 0; i < 10; i += 1) {
    const started = performance.now();
    await readFile(file);
    slowest = Math.max(slowest, performance.now() - started);
  }
  const statuses = await Promise.all(flood.map((p) => p.then((r) => r.status)));
  assert.deepEqual(new Set(statuses), new Set([401]));
  assert.ok(slowest < 250, `slowest file read during the flood: ${slowest.toFixed(0)} ms`);
});

test('a burst of 12 concurrent batches with the good password, before it is cached, all pass under a budget of 2', async (t) => {
  const app = await startApp(t, { PARTNER_AUTH_MAX_FAILURES: '2' });
  const statuses = await Promise.all(
    Array.from({ length: 12 }, async () => (await app.postBatch({ transactions: [bankRecord()] })).status),
  );
  assert.deepEqual(statuses, Array(12).fill(200));
});

test('a password revoked while its check is running is refused, to the request that started it and to those that joined', async (t) => {
  const app = await startApp(t);
  const { partners } = app.deps.store;
  // scrypt held until the revocation has committed: on a busy process the checks queue for seconds.
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let started = () => {};
  const checking = new Promise<void>((resolve) => (started = resolve));
  const authenticate = createPartnerAuthenticator(app.deps.store, {
    verify: async (password, hash) => {
      started();
      await held;
      return verifyPassword(password, hash);
    },
  });
  const first = authenticate(DEMO_PASSWORD, '203.0.113.9');
  await checking;
  // Revoked by ops (the CLI, or the dashboard of another process) while the check runs.
  assert.equal(await partners.revokePasswords({ partnerId: 'demo-bank', label: 'demo', now: new Date() }), 1);
  const joined = authenticate(DEMO_PASSWORD, '203.0.113.9');
  release();
  assert.deepEqual(await Promise.all([first, joined]), [undefined, undefined]);
  assert.equal(await authenticate(DEMO_PASSWORD, '203.0.113.9'), undefined);
});

test('a store that cannot answer spends none of the budget of wrong passwords: the bank is let in once it is back (postgresql)', async (t) => {
  const postgres = await startPostgres(t);
  const app = await startApp(t, { DATABASE_URL: await postgres.createTestDatabase() });
  const { authenticate } = countingAuthenticator(app, '2');
  // PostgreSQL down before the bank's password was ever verified (a process started just before): each
  // batch the bank sends meanwhile fails as an outage (503), not as a wrong password.
  await postgres.crash();
  for (let i = 0; i < 5; i += 1) {
    await assert.rejects(authenticate(DEMO_PASSWORD, '203.0.113.7'), (err: Error & { code?: string }) => {
      assert.notEqual(err.code, 'too-many-requests', 'an outage is not a wrong password');
      return true;
    });
  }
  await postgres.restart();
  assert.equal(await authenticate(DEMO_PASSWORD, '203.0.113.7'), 'demo-bank');
});
