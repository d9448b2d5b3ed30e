import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { bankRecord, startApp, tempDir } from '../helpers.ts';
import { runCli, runCliProcess } from './processes.ts';
import { paidOrders } from '../support/orders.ts';
import { startRedis } from '../support/redis.ts';

test('amil partner set-password generates a password, shown once, that the webhook accepts', async (t) => {
  const app = await startApp(t);
  const env = app.storeEnv;
  const added = await runCli(['partner', 'set-password', 'maybank', '--new', '--label', 'first'], env);
  assert.equal(added.code, 0, added.stderr);
  const password = /X-API-Password: (\S+)/.exec(added.stdout)?.[1] ?? '';
  assert.match(password, /^[\w-]{43}$/);
  assert.match(added.stdout, /shown once/);

  const response = await app.postBatch({ transactions: [bankRecord()] }, { 'x-api-password': password });
  assert.equal(response.status, 200);

  const listed = await runCli(['partner', 'list'], env);
  assert.equal(listed.code, 0);
  assert.match(listed.stdout, /maybank/);
  assert.match(listed.stdout, /first\s+created .* ACTIVE/);
  assert.ok(!listed.stdout.includes(password), 'list never shows a password');
  assert.ok(!listed.stdout.includes('scrypt$'), 'nor its hash');
});

test('amil partner set-password --password-stdin --revoke-others rotates to a chosen password', async (t) => {
  const dataDir = tempDir(t);
  const env = { DATA_DIR: dataDir, SEED_DEMO: 'false' };
  assert.equal((await runCli(['partner', 'set-password', 'bank-a', '--new', '--label', 'old'], env)).code, 0);
  // The real entry point, as its own process: the password arrives on its standard input.
  const rotated = await runCliProcess(
    ['partner', 'set-password', 'bank-a', '--label', 'new', '--password-stdin', '--revoke-others'],
    env,
    'chosen-password-from-the-bank\n',
  );
  assert.equal(rotated.code, 0, rotated.stderr);
  assert.ok(!rotated.stdout.includes('chosen-password-from-the-bank'), 'a chosen password is not echoed');
  const listed = await runCli(['partner', 'list', '--json'], env);
  const [partner] = JSON.parse(listed.stdout) as {
    id: string;
    passwords: { label: string; revokedAt: string | null }[];
  }[];
  assert.equal(partner?.id, 'bank-a');
  assert.deepEqual(
    partner?.passwords.map((p) => [p.label, p.revokedAt === null]),
    [
      ['old', false],
      ['new', true],
    ],
  );

  const short = await runCliProcess(['partner', 'set-password', 'bank-a', '--password-stdin'], env, 'short');
  assert.equal(short.code, 1);
  assert.match(short.stderr, /at least 16 characters/);
  const badId = await runCli(['partner', 'set-password', 'Bank A'], env);
  assert.notEqual(badId.code, 0);
});

test('amil anomalies list shows conflicts with both versions, and resolve closes them', async (t) => {
  const app = await startApp(t);
  const paid = bankRecord();
  await app.postBatch({ transactions: [paid] });
  const conflict = (await (
    await app.postBatch({ transactions: [{ ...paid, status: 'failed' }] })
  ).json()) as {
    results: { anomaly_id: string }[];
  };
  const id = conflict.results[0]?.anomaly_id ?? '';
  const env = app.storeEnv;

  const listed = await runCli(['anomalies', 'list'], env);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, new RegExp(`${id}\\s+open\\s+${paid.orderno}`));
  assert.match(listed.stdout, /"status":"success"/);
  assert.match(listed.stdout, /"status":"failed"/);

  const json = JSON.parse((await runCli(['anomalies', 'list', '--json'], env)).stdout) as {
    incomingRecord: { status: string };
  }[];
  assert.equal(json[0]?.incomingRecord.status, 'failed');

  const resolved = await runCli(['anomalies', 'resolve', id, '--note', 'bank confirmed success'], env);
  assert.equal(resolved.code, 0);
  assert.match((await runCli(['anomalies', 'list'], env)).stdout, /No open anomalies/);
  assert.match(
    (await runCli(['anomalies', 'list', '--status', 'resolved'], env)).stdout,
    /bank confirmed success/,
  );
  assert.equal((await runCli(['anomalies', 'resolve', id, '--note', 'again'], env)).code, 1);
});

test('amil queues in embedded mode reports the outbox, and queues retry puts failed jobs back', async (t) => {
  const app = await startApp(t);
  await app.postBatch({ transactions: [bankRecord()] });
  const env = app.storeEnv;
  const before = JSON.parse((await runCli(['queues', '--json'], env)).stdout) as {
    runtime: string;
    counts: { queue: string; waiting: number }[];
  };
  assert.equal(before.runtime, 'in-process');
  assert.deepEqual(
    before.counts.map((c) => [c.queue, c.waiting]),
    [
      ['callbacks', 0],
      ['normalise', 1],
    ],
    'the callbacks always have their line: their own rows are their queue',
  );

  const [row] = await app.deps.store.outbox.pending(1, new Date());
  await app.deps.store.outbox.markAttemptFailed(row?.id ?? 0, 'boom', new Date(), undefined);
  const listed = await runCli(['queues'], env);
  assert.match(listed.stdout, /failed normalise normalise\.bat_\w+ after 1 attempt\(s\): boom/);
  const retried = await runCli(['queues', 'retry', 'normalise'], env);
  assert.match(retried.stdout, /1 failed job\(s\) put back in line/);
  assert.equal((await app.deps.store.outbox.pending(5, new Date())).length, 1);
});

test('amil queues in Redis mode counts the callbacks on their own line, never as waiting for Redis', async (t) => {
  const redis = await startRedis(t);
  const app = await startApp(t, { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });
  await paidOrders(app.deps.store.orders, 'http://127.0.0.1:9/callback', 2);
  const env = { ...app.storeEnv, REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix };
  const listed = await runCli(['queues'], env);
  assert.equal(listed.code, 0, listed.stderr);
  // The workers lease callbacks from their own rows (decisions 218, 264): nothing of theirs waits for Redis.
  assert.match(listed.stdout, /outbox: 0 job\(s\) waiting to be handed to Redis/);
  assert.match(listed.stdout, /^callbacks\s+2\s+0\s+0\s+0\s+0$/m);
});

test('amil agency add prints a key once; show never does; rotate-key replaces it; set merges settings', async (t) => {
  const app = await startApp(t);
  const env = app.storeEnv;
  const added = await runCli(
    [
      'agency',
      'add',
      'MAIS',
      '--name',
      'Majlis Agama Islam Selangor',
      '--categories',
      'zakat-fitrah',
      '--add-charge',
      'fpx=1.00',
    ],
    env,
  );
  assert.equal(added.code, 0, added.stderr);
  const key = /API key: ([0-9a-f-]{36})/.exec(added.stdout)?.[1] ?? '';
  assert.equal(await app.deps.store.agencies.apiKeyOf('MAIS'), key);

  const shown = await runCli(['agency', 'show', 'MAIS'], env);
  assert.match(shown.stdout, /add charges: fpx RM 1\.00/);
  assert.ok(!shown.stdout.includes(key), 'show never prints the key');
  assert.ok(!(await runCli(['agency', 'list', '--json'], env)).stdout.includes(key), 'nor does list');

  const set = await runCli(
    [
      'agency',
      'set',
      'MAIS',
      '--add-charge',
      'card=1.5%',
      '--duitnow-city',
      'SHAH ALAM',
      '--duitnow-category',
      '8661',
    ],
    env,
  );
  assert.equal(set.code, 0, set.stderr);
  const settings = (await app.deps.store.agencies.get('MAIS'))?.settings;
  assert.deepEqual(settings?.addCharges, { fpx: { fixedSen: 100 }, card: { percent: 1.5 } });
  assert.deepEqual(settings?.duitnow, { city: 'SHAH ALAM', categoryCode: '8661' });
  const tooLong = await runCli(['agency', 'set', 'MAIS', '--duitnow-city', 'KUALA LUMPUR CITY CENTRE'], env);
  assert.notEqual(tooLong.code, 0, 'a value that would overflow its QR tag is refused');
  assert.notEqual((await runCli(['agency', 'set', 'MAIS', '--duitnow-category', '86'], env)).code, 0);

  const rotated = await runCli(['agency', 'rotate-key', 'MAIS'], env);
  const newKey = /API key: ([0-9a-f-]{36})/.exec(rotated.stdout)?.[1];
  assert.ok(newKey && newKey !== key);
  assert.equal(await app.deps.store.agencies.apiKeyOf('MAIS'), newKey);
  assert.equal((await runCli(['agency', 'add', 'MAIS', '--name', 'again'], env)).code, 1, 'codes are unique');
});

test('amil agency set --category-name names a category in English and Malay, shown to payers on the pay page', async (t) => {
  const app = await startApp(t);
  const env = app.storeEnv;
  const set = await runCli(
    [
      'agency',
      'set',
      'LZS',
      '--category-name',
      'zakat-perniagaan=Zakat on business income|Zakat Perniagaan Syarikat',
    ],
    env,
  );
  assert.equal(set.code, 0, set.stderr);
  const names = (await app.deps.store.agencies.get('LZS'))?.settings.categoryNames;
  assert.deepEqual(names?.['zakat-perniagaan'], {
    en: 'Zakat on business income',
    ms: 'Zakat Perniagaan Syarikat',
  });
  assert.deepEqual(
    names?.['zakat-fitrah'],
    { en: 'Zakat Fitrah', ms: 'Zakat Fitrah' },
    'other names are kept',
  );
  const shown = await runCli(['agency', 'show', 'LZS'], env);
  assert.match(shown.stdout, /zakat-perniagaan: Zakat on business income \| Zakat Perniagaan Syarikat/);
  const page = await fetch(`${app.url}/pay/LZS/zakat-perniagaan/B-1/50.00`, {
    headers: { accept: 'text/html', 'accept-language': 'ms' },
  });
  assert.match(await page.text(), /<dd>Zakat Perniagaan Syarikat<\/dd>/);
  for (const bad of ['zakat-perniagaan=Only English', 'zakat-kereta=Car|Kereta', 'Bad Id=A|B']) {
    const refused = await runCli(['agency', 'set', 'LZS', '--category-name', bad], env);
    assert.notEqual(refused.code, 0, bad);
  }
});

test('amil agency set --logo stores a small image that the pay pages show, served by us with caching headers', async (t) => {
  const app = await startApp(t);
  const env = app.storeEnv;
  const dir = tempDir(t);
  // A 1x1 PNG.
  const png = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
    'base64',
  );
  writeFileSync(path.join(dir, 'logo.png'), png);
  writeFileSync(path.join(dir, 'logo.txt'), 'not an image');
  const set = await runCli(['agency', 'set', 'LZS', '--logo', path.join(dir, 'logo.png')], env);
  assert.equal(set.code, 0, set.stderr);
  assert.match((await runCli(['agency', 'show', 'LZS'], env)).stdout, /logo: image\/png, 70 bytes/);
  assert.notEqual(
    (await runCli(['agency', 'set', 'LZS', '--logo', path.join(dir, 'logo.txt')], env)).code,
    0,
  );

  const served = await fetch(`${app.url}/agency-logo/LZS`);
  assert.equal(served.status, 200);
  assert.equal(served.headers.get('content-type'), 'image/png');
  assert.match(served.headers.get('cache-control') ?? '', /max-age=\d+/);
  assert.deepEqual(Buffer.from(await served.arrayBuffer()), png);
  const etag = served.headers.get('etag') ?? '';
  assert.ok(etag, 'an ETag');
  // fetch would add `Cache-Control: no-cache` to a conditional request; a browser revalidating does not.
  const revalidated = await fetch(`${app.url}/agency-logo/LZS`, {
    headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' },
  });
  assert.equal(revalidated.status, 304);
  assert.equal((await fetch(`${app.url}/agency-logo/PPZ`)).status, 404, 'an agency without a logo');
  const page = await fetch(`${app.url}/pay/LZS/zakat-fitrah/F-1/7.00`, { headers: { accept: 'text/html' } });
  assert.match(
    await page.text(),
    /<img class="logo" src="\/agency-logo\/LZS\?v=[\w-]+" alt="Lembaga Zakat Selangor"/,
  );
});

test('a logo replaced with amil agency set --logo shows on the next pay page, not after the day it is cached', async (t) => {
  const app = await startApp(t);
  const dir = tempDir(t);
  const png = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
    'base64',
  );
  const logoOnPage = async (bytes: Buffer): Promise<string> => {
    writeFileSync(path.join(dir, 'logo.png'), bytes);
    const set = await runCli(['agency', 'set', 'LZS', '--logo', path.join(dir, 'logo.png')], app.storeEnv);
    assert.equal(set.code, 0, set.stderr);
    const page = await fetch(`${app.url}/pay/LZS/zakat-fitrah/F-1/7.00`, {
      headers: { accept: 'text/html' },
    });
    const src = /<img class="logo" src="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    const served = await fetch(`${app.url}${src.replaceAll('&amp;', '&')}`);
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), bytes, 'its address serves this logo');
    return src;
  };
  const first = await logoOnPage(png);
  // A browser (or a cache in front of amil) keeps an image a day by its address: the replaced logo must
  // have another one, or payers see the old logo until then.
  const second = await logoOnPage(Buffer.concat([png, Buffer.from([0])]));
  assert.notEqual(second, first, 'the replaced logo has an address of its own');
});

test('amil token mint prints a token for existing agencies, and revoke revokes it', async (t) => {
  const app = await startApp(t);
  const env = app.storeEnv;
  const minted = await runCli(['token', 'mint', '--agencies', 'LZS,PPZ', '--ttl', '90d'], env);
  assert.equal(minted.code, 0, minted.stderr);
  const jti = /Token ([0-9a-f-]{36})/.exec(minted.stdout)?.[1] ?? '';
  assert.match(minted.stdout, /^ey[\w-]+\.[\w-]+\.[\w-]+$/m);
  assert.deepEqual((await app.deps.store.reportTokens.get(jti))?.agencies, ['LZS', 'PPZ']);
  assert.equal((await runCli(['token', 'mint', '--agencies', 'NOPE'], env)).code, 1);
  assert.equal((await runCli(['token', 'revoke', jti], env)).code, 0);
  assert.ok((await app.deps.store.reportTokens.get(jti))?.revokedAt);
  assert.equal((await runCli(['token', 'revoke', jti], env)).code, 1);
});

test('amil callbacks list --failed shows a callback given up; redeliver queues it again and the pipeline sends it', async (t) => {
  const { postOrder, startMerchant } = await import('../support/merchant.ts');
  const { createInProcessRuntime } = await import('../../pipeline/in-process-runtime.ts');
  const app = await startApp(t, { CALLBACK_GIVE_UP_MS: '10' });
  let up = false;
  const merchant = await startMerchant(t, () => (up ? 200 : 503));
  const res = await postOrder(app, {
    agency: 'LZS',
    refNo: 'CLI-1',
    amount: '10.00',
    email: 'ali@example.my',
    returnUrl: `${merchant.url}/cb`,
  });
  const { orderNo, checkoutUrl } = (await res.json()) as { orderNo: string; checkoutUrl: string };
  const t0 = new URL(checkoutUrl, app.url).searchParams.get('t') ?? '';
  await fetch(`${app.url}/v2/checkout/${orderNo}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ t: t0, method: 'fpx', bank: 'SBX00' }).toString(),
  });
  const relay = createInProcessRuntime(app.deps);
  await relay.drain();
  const env = app.storeEnv;
  const listed = await runCli(['callbacks', 'list', '--failed'], env);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(
    listed.stdout,
    new RegExp(`${orderNo}\\s+LZS\\s+success\\s+dead\\s+1 attempt\\(s\\), last \\S+ 503`),
  );

  up = true;
  const again = await runCli(['callbacks', 'redeliver', orderNo], env);
  assert.equal(again.code, 0, again.stderr);
  await relay.drain();
  assert.deepEqual(
    merchant.received.map((r) => r.answeredWith),
    [503, 200],
  );
  assert.equal((await runCli(['callbacks', 'redeliver', 'AM000000NOPE'], env)).code, 1);
});

test('amil callbacks list --failed also shows a callback still retrying after a failed attempt, with its next attempt', async (t) => {
  const { postOrder, startMerchant } = await import('../support/merchant.ts');
  const { createInProcessRuntime } = await import('../../pipeline/in-process-runtime.ts');
  const { sample } = await import('../support/metrics.ts');
  const app = await startApp(t, { CALLBACK_RETRY_MS: '60000' });
  const merchant = await startMerchant(t, () => 503);
  const res = await postOrder(app, {
    agency: 'LZS',
    refNo: 'CLI-RETRY',
    amount: '10.00',
    email: 'ali@example.my',
    returnUrl: `${merchant.url}/cb`,
  });
  const { orderNo, checkoutUrl } = (await res.json()) as { orderNo: string; checkoutUrl: string };
  const t0 = new URL(checkoutUrl, app.url).searchParams.get('t') ?? '';
  await fetch(`${app.url}/v2/checkout/${orderNo}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ t: t0, method: 'fpx', bank: 'SBX00' }).toString(),
  });
  // One attempt answered 503; the next is a minute away, so the callback is queued and failing.
  await createInProcessRuntime(app.deps).drain();
  assert.equal(merchant.received.length, 1);
  const [callback] = await app.deps.store.callbacks.ofOrder(orderNo);
  assert.deepEqual([callback?.state, callback?.attempts], ['queued', 1]);

  const env = app.storeEnv;
  const listed = await runCli(['callbacks', 'list', '--failed'], env);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(
    listed.stdout,
    new RegExp(
      `${orderNo}\\s+LZS\\s+success\\s+retrying\\s+1 attempt\\(s\\), last \\S+ 503, next ${callback?.nextAttemptAt}`,
    ),
  );
  const json = await runCli(['callbacks', 'list', '--failed', '--json'], env);
  const rows = JSON.parse(json.stdout) as { orderNo: string; state: string; nextAttemptAt: string }[];
  assert.deepEqual(
    rows.map((r) => [r.orderNo, r.state, r.nextAttemptAt]),
    [[orderNo, 'queued', callback?.nextAttemptAt]],
  );
  // The metrics say the same: one callback queued after one attempt.
  const text = await app.deps.metrics.registry.metrics();
  assert.equal(sample(text, 'amil_callbacks', { state: 'queued', attempts: '1' }), 1);
});
