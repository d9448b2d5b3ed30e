/**
 * PostgreSQL quotes row values in its errors ("Failing row contains (...)", "Key (email)=(...)"): names,
 * e-mails and IC numbers the bank sent. Whatever error reaches a log line, those values do not.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openPgPool } from '../../core/store/pg/pool.ts';
import { bankRecord, startApp } from '../helpers.ts';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';
import { capturedLogger } from '../support/logs.ts';

let server: TestPostgres;
before(async () => {
  server = await startPostgres();
});
after(() => server.stop());

test("a PostgreSQL error that quotes a payer's row is logged without the row's values", async (t) => {
  const url = await server.createTestDatabase();
  const app = await startApp(t, { DATABASE_URL: url, LOG_LEVEL: 'warn' });
  await app.deps.store.ping();
  // A constraint the application does not know of (a DBA's, or a bug's): PostgreSQL refuses the row and
  // quotes all of it in the error's detail.
  const pg = openPgPool(url);
  t.after(() => pg.close());
  await pg.run('ALTER TABLE bank_postings ADD CONSTRAINT no_bugs CHECK (amount_sen <> 4242)');
  const base = bankRecord();
  const record = bankRecord({
    amount: 42.42,
    name: 'Siti Payer Rahsia',
    email: 'siti.rahsia@example.my',
    data: {
      ...base.data,
      email: 'siti.rahsia@example.my',
      zakat_name: 'Siti Payer Rahsia',
      zakat_ic_no: '900101145678',
      zakat_phone: '0129876543',
      zakat_amount: '42.42',
    },
  });
  const res = await app.postBatch({ transactions: [record] });
  assert.equal(res.status, 500, await res.text());
  const logs = app.logs();
  assert.match(logs, /"code":"23514"/, 'the error is logged, with its code');
  assert.match(logs, /no_bugs/, 'and its constraint');
  for (const value of [
    'Siti Payer Rahsia',
    'siti.rahsia@example.my',
    '900101145678',
    '0129876543',
    record.orderno,
  ])
    assert.ok(!logs.includes(value), `${value} is in the logs: ${logs}`);
});

test("a unique key's value PostgreSQL quotes is not logged, alone or among an aggregate's errors", async (t) => {
  const pg = openPgPool(await server.createTestDatabase());
  t.after(() => pg.close());
  await pg.run('CREATE TABLE payers (email text UNIQUE)');
  await pg.run("INSERT INTO payers VALUES ('siti.rahsia@example.my')");
  const refused = (await pg
    .run("INSERT INTO payers VALUES ('siti.rahsia@example.my')")
    .catch((err: unknown) => err)) as Error & { detail?: string };
  assert.match(refused.detail ?? '', /Key \(email\)=\(siti\.rahsia@example\.my\) already exists/);
  const { logger, lines } = capturedLogger('info');
  logger.error({ err: refused }, 'alone');
  logger.error(refused, 'as the first argument');
  logger.error({ err: new AggregateError([refused], 'several') }, 'among others');
  // Something logged as an error that is not one: its data is left out too, and the object left as it was.
  const notAnError = { code: '23505', detail: 'Key (email)=(siti.rahsia@example.my) already exists.' };
  logger.error({ err: notAnError }, 'not an error');
  // An error pino already serialized, logged again: it has aggregateErrors but no errors of its own.
  logger.error(
    { err: { ...notAnError, message: 'again', aggregateErrors: [{ detail: 'siti.rahsia' }] } },
    'x',
  );
  assert.match(notAnError.detail, /siti\.rahsia/, "the caller's object is not changed");
  const out = lines.join('');
  assert.equal(lines.length, 5, 'every call logged, none threw');
  assert.ok(!out.includes('siti.rahsia'), out);
  assert.equal((out.match(/"code":"23505"/g) ?? []).length, 5, 'each still names the error');
  assert.equal((out.match(/"constraint":"payers_email_key"/g) ?? []).length, 3);
});
