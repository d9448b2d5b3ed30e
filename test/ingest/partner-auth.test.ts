import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { bankRecord, DEMO_PASSWORD, startApp } from '../helpers.ts';
import { hashPassword } from '../../core/passwords.ts';

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
  const db = new Database(app.deps.store.file, { readonly: true });
  t.after(() => db.close());
  const hashes = db.prepare('SELECT hash FROM partner_passwords').pluck().all() as string[];
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
