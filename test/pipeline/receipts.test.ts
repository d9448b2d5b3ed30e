import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { fixedClock } from '../../core/clock.ts';
import { settleOrder } from '../../core/payments/settle.ts';
import { receiptJob } from '../../pipeline/jobs/receipt.ts';
import { BusyJobError } from '../../pipeline/jobs/types.ts';
import { createBullRuntime } from '../../pipeline/bullmq/runtime.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { onCleanup, startApp, type TestApp } from '../helpers.ts';
import { appDb } from '../support/app-db.ts';
import { postOrder, startMerchant } from '../support/merchant.ts';
import { startRedis } from '../support/redis.ts';
import { startSmtp } from '../support/smtp.ts';

/** A 10.00 order of LZS (FPX add charge 1.00) paid by FPX at a sandbox bank that decides at once. */
async function payAt(
  t: TestContext,
  app: TestApp,
  bank: string,
  refNo = `INV-${Math.random().toString(36).slice(2, 10)}`,
) {
  const merchant = await startMerchant(t);
  const res = await postOrder(app, {
    agency: 'LZS',
    refNo,
    amount: '10.00',
    email: 'ali@example.my',
    returnUrl: `${merchant.url}/return`,
  });
  assert.equal(res.status, 201, await res.clone().text());
  const created = (await res.json()) as { orderNo: string; checkoutUrl: string };
  const token = new URL(created.checkoutUrl, app.url).searchParams.get('t') ?? '';
  const pay = await fetch(`${app.url}/v2/checkout/${created.orderNo}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: new URLSearchParams({ t: token, method: 'fpx', bank }).toString(),
    redirect: 'manual',
  });
  assert.equal(pay.status, 303);
  // The payer's browser comes back to the return page, which asks the acquirer and settles the order.
  const back = await fetch(new URL(pay.headers.get('location') ?? '', app.url), {
    headers: { accept: 'text/html' },
  });
  await back.text();
  const order = await app.deps.store.orders.order(created.orderNo);
  assert.ok(order);
  return order;
}

/** Runs the pipeline until nothing is ready; a failed job is retried 10 ms later. */
// A retry waits 200 ms: long enough that one drain never reaches it (a drain ends when nothing is due, and on
// a loaded machine one pass over the queues, callbacks included, can outlast a shorter backoff).
async function drain(app: TestApp): Promise<void> {
  await createInProcessRuntime(app.deps, { pollMs: 10, maxAttempts: 5, backoffMs: 200 }).drain();
}

test('a paid order gets one receipt over SMTP, in Malay then English, as text and escaped HTML, with every field', async (t) => {
  const smtp = await startSmtp(t);
  const app = await startApp(t, {
    SMTP_URL: smtp.url,
    RECEIPT_MAIL_FROM: 'Lembaga Zakat Selangor <resit@lzs.example.my>',
  });
  const order = await payAt(t, app, 'SBX00', 'INV-<b>&"7"');
  assert.equal(order.status, 'success');
  await drain(app);

  assert.equal(smtp.received.length, 1);
  const { to, mail } = smtp.received[0]!;
  assert.deepEqual(to, ['ali@example.my']);
  assert.deepEqual(mail.from?.value, [{ name: 'Lembaga Zakat Selangor', address: 'resit@lzs.example.my' }]);
  assert.equal(mail.messageId, `<receipt.${order.orderNo}@lzs.example.my>`);
  assert.equal(
    mail.subject,
    '[SANDBOX] Resit pembayaran / Payment receipt: Lembaga Zakat Selangor, INV-<b>&"7"',
  );
  const text = mail.text ?? '';
  const line = (label: string) =>
    new RegExp(`^${label.replace(/[.()/]/g, '\\$&')}:\\s+(.*)$`, 'm').exec(text)?.[1];
  assert.equal(line('Agensi / Agency'), 'Lembaga Zakat Selangor');
  assert.equal(line('No. rujukan / Reference'), 'INV-<b>&"7"');
  assert.equal(line('No. pesanan / Order number'), order.orderNo);
  assert.equal(line('Amaun / Amount'), 'RM 10.00');
  assert.equal(line('Caj tambahan / Add charge'), 'RM 1.00');
  assert.equal(line('Jumlah dibayar / Total paid'), 'RM 11.00');
  assert.equal(line('Kaedah / Method'), 'FPX (perbankan dalam talian) / FPX (online banking)');
  assert.equal(line('Bank'), order.bankName);
  assert.ok(order.fpxTxnId && order.fpxTxnTime);
  assert.equal(line('ID transaksi / Transaction ID'), order.fpxTxnId);
  assert.equal(line('Masa transaksi / Transaction time'), `${order.fpxTxnTime} (UTC+8)`);
  // Malay first, then English; the sandbox says no money moved.
  const malay = text.indexOf('Pembayaran anda kepada Lembaga Zakat Selangor telah berjaya.');
  const english = text.indexOf('Your payment to Lembaga Zakat Selangor was successful.');
  assert.ok(malay > 0 && english > malay, 'Malay, then English');
  assert.match(text, /no money moved/);

  const html = typeof mail.html === 'string' ? mail.html : '';
  assert.match(
    html,
    /<th align="left">No\. rujukan \/ Reference<\/th>\s*<td>INV-&lt;b&gt;&amp;&quot;7&quot;<\/td>/,
  );
  assert.doesNotMatch(html, /INV-<b>/, "the merchant's refNo is escaped, never markup");
  assert.match(html, /<td>RM 11\.00<\/td>/);
  assert.match(html, new RegExp(`<td>${order.fpxTxnTime} \\(UTC\\+8\\)</td>`));

  const receipt = await app.deps.store.receipts.of(order.orderNo);
  assert.equal(receipt?.state, 'sent');
  assert.deepEqual(
    receipt?.attempts.map((a) => [a.attempt, a.outcome, a.messageId]),
    [[1, 'sent', mail.messageId]],
  );
});

test('without SMTP_URL the receipt is an .eml file under DATA_DIR/mail, recorded with its file', async (t) => {
  const app = await startApp(t);
  const order = await payAt(t, app, 'SBX00');
  await drain(app);
  const dir = path.join(app.dataDir, 'mail');
  const files = readdirSync(dir).filter((f) => f.endsWith('.eml'));
  assert.equal(files.length, 1);
  assert.match(files[0]!, /Resit-pembayaran-Payment-receipt/);
  const mail = await simpleParser(readFileSync(path.join(dir, files[0]!)));
  assert.deepEqual(mail.to && !Array.isArray(mail.to) ? mail.to.value.map((v) => v.address) : [], [
    'ali@example.my',
  ]);
  assert.match(mail.text ?? '', new RegExp(`No\\. pesanan / Order number:\\s+${order.orderNo}`));
  assert.match(typeof mail.html === 'string' ? mail.html : '', /<td>RM 11\.00<\/td>/);
  const receipt = await app.deps.store.receipts.of(order.orderNo);
  assert.deepEqual(
    receipt?.attempts.map((a) => [a.outcome, a.detail]),
    [['sent', path.join('mail', files[0]!)]],
  );
});

test('a mail server answering 451 is tried again: one receipt, both attempts recorded', async (t) => {
  const smtp = await startSmtp(t, (nth) => (nth === 0 ? 451 : 250));
  const app = await startApp(t, { SMTP_URL: smtp.url });
  const order = await payAt(t, app, 'SBX00');
  // The retry is due after a backoff: drain until it has run (a loaded machine may need more than one pass;
  // a slower store may run it within the first). The attempts below show the first one refused.
  await drain(app);
  for (const deadline = Date.now() + 10_000; smtp.received.length === 0 && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    await drain(app);
  }
  assert.equal(smtp.received.length, 1);
  const receipt = await app.deps.store.receipts.of(order.orderNo);
  assert.equal(receipt?.state, 'sent');
  assert.deepEqual(
    receipt?.attempts.map((a) => [a.attempt, a.outcome]),
    [
      [1, 'failed'],
      [2, 'sent'],
    ],
  );
  assert.match(receipt?.attempts[0]?.detail ?? '', /451/);
});

test('a mailbox the server refuses for good (550) is recorded as refused and not tried again', async (t) => {
  const smtp = await startSmtp(t, () => 550);
  const app = await startApp(t, { SMTP_URL: smtp.url });
  const order = await payAt(t, app, 'SBX00');
  await drain(app);
  await new Promise((resolve) => setTimeout(resolve, 50));
  await drain(app);
  const receipt = await app.deps.store.receipts.of(order.orderNo);
  assert.equal(receipt?.state, 'refused');
  assert.deepEqual(
    receipt?.attempts.map((a) => a.outcome),
    ['refused'],
  );
  const failed = await app.deps.store.outbox.failed();
  assert.deepEqual(
    failed.map((f) => f.jobId),
    [`receipt.${order.orderNo}`],
    'shown failed for ops, not retried',
  );
});

test("a mail server quoting the payer's address as it refuses it: the address is in no log line, outbox error or attempt", async (t) => {
  // As Postfix answers: the recipient quoted, 450 first (tried again), then 550 (given up).
  const smtp = await startSmtp(t, (nth) => (nth === 0 ? 450 : 550), { refuseAt: 'rcpt' });
  const app = await startApp(t, { SMTP_URL: smtp.url, LOG_LEVEL: 'debug' });
  const order = await payAt(t, app, 'SBX00');
  await drain(app);
  await new Promise((resolve) => setTimeout(resolve, 250));
  await drain(app);

  const receipt = await app.deps.store.receipts.of(order.orderNo);
  assert.deepEqual(
    receipt?.attempts.map((a) => a.outcome),
    ['failed', 'refused'],
  );
  const failed = await app.deps.store.outbox.failed();
  assert.match(failed[0]?.lastError ?? '', /550 <\[address\]>: Recipient address rejected/);
  const logs = app.logs();
  assert.match(logs, /Recipient address rejected/, 'both failures logged');
  for (const text of [
    logs,
    ...failed.map((f) => f.lastError),
    ...(receipt?.attempts ?? []).map((a) => a.detail),
  ])
    assert.doesNotMatch(text ?? '', /ali@example\.my/);
});

test('the same settlement twice, and the job run again, send one receipt', async (t) => {
  const smtp = await startSmtp(t);
  const app = await startApp(t, { SMTP_URL: smtp.url });
  const order = await payAt(t, app, 'SBX00');
  // The acquirer's answer again (an enquiry after the return page): unchanged, nothing queued.
  const again = await settleOrder(
    app.deps,
    order,
    { code: '00', txnId: order.fpxTxnId, txnTime: order.fpxTxnTime },
    'enquiry',
  );
  assert.equal(again.outcome, 'unchanged');
  await drain(app);
  // A job run twice (a redelivered queue job) finds the receipt sent.
  await receiptJob.process({ orderNo: order.orderNo }, app.deps);
  await app.deps.store.outbox.enqueue('receipts', 'receipt.again', { orderNo: order.orderNo }, new Date());
  await drain(app);
  assert.equal(smtp.received.length, 1);
  assert.equal((await app.deps.store.receipts.of(order.orderNo))?.attempts.length, 1);
});

test('a failed or pending payment gets no receipt; a pending one that then succeeds gets it', async (t) => {
  const smtp = await startSmtp(t);
  const app = await startApp(t, { SMTP_URL: smtp.url });
  const failed = await payAt(t, app, 'SBX51');
  const pending = await payAt(t, app, 'SBX09');
  assert.deepEqual([failed.status, pending.status], ['failed', 'pending']);
  await drain(app);
  assert.equal(smtp.received.length, 0);
  assert.equal(await app.deps.store.receipts.of(failed.orderNo), undefined);
  assert.equal(await app.deps.store.receipts.of(pending.orderNo), undefined);

  const { outcome } = await settleOrder(
    app.deps,
    pending,
    { code: '00', txnId: 'T-LATER', txnTime: '2026-11-24 10:00:00' },
    'enquiry',
  );
  assert.equal(outcome, 'applied');
  await drain(app);
  assert.equal(smtp.received.length, 1);
  assert.match(smtp.received[0]?.mail.text ?? '', /Transaction ID:\s+T-LATER/);
});

test('two workers running one receipt job at once send it once', async (t) => {
  const smtp = await startSmtp(t);
  const app = await startApp(t, { SMTP_URL: smtp.url });
  const order = await payAt(t, app, 'SBX00');
  const runs = await Promise.allSettled([
    receiptJob.process({ orderNo: order.orderNo }, app.deps),
    receiptJob.process({ orderNo: order.orderNo }, app.deps),
  ]);
  assert.deepEqual(
    runs.map((r) => r.status),
    ['fulfilled', 'rejected'],
    'the second finds the receipt leased and is retried later',
  );
  await drain(app);
  assert.equal(smtp.received.length, 1);
  assert.equal((await app.deps.store.receipts.of(order.orderNo))?.attempts.length, 1);
});

/** A real listener that takes connections and says nothing: a hung mail server. */
async function silentSmtp(t: TestContext): Promise<string> {
  const silent = createServer((socket) => onCleanup(t, () => socket.destroy()));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  onCleanup(t, () => new Promise<void>((resolve) => silent.close(() => resolve())));
  return `smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`;
}

test('an SMTP server that accepts and never greets is given up after SMTP_TIMEOUT_MS, and the attempt recorded', async (t) => {
  const app = await startApp(t, { SMTP_URL: await silentSmtp(t), SMTP_TIMEOUT_MS: '1000' });
  const order = await payAt(t, app, 'SBX00');
  const started = Date.now();
  await assert.rejects(receiptJob.process({ orderNo: order.orderNo }, app.deps));
  const waited = Date.now() - started;
  assert.ok(waited < 5000, `gave up after ${waited} ms (nodemailer's own greeting timeout is 30 s)`);
  const attempts = (await app.deps.store.receipts.of(order.orderNo))?.attempts ?? [];
  assert.equal(attempts.length, 1, 'the attempt is recorded');
});

test('an attempt holds its receipt for three SMTP timeouts plus 5 s, so one a dead worker left is free after that', async (t) => {
  const clock = fixedClock(new Date());
  const app = await startApp(t, { SMTP_URL: await silentSmtp(t), SMTP_TIMEOUT_MS: '3000' }, { clock });
  const order = await payAt(t, app, 'SBX00');
  const taken = clock.now().getTime();
  // The first attempt takes the receipt and waits on the silent server (as a worker killed mid-send would
  // have left it: taken, nothing recorded).
  const first = receiptJob.process({ orderNo: order.orderNo }, app.deps).then(
    () => 'sent',
    (err: Error) => err.message,
  );
  // Until it holds the lease (a fixed pause was too short on a loaded machine).
  const db = appDb(t, app);
  const leased = async () =>
    (
      await db.rows<{ lease: string | null }>(
        'SELECT lease_until AS lease FROM receipts WHERE order_no = ?',
        [order.orderNo],
      )
    )[0]?.lease;
  for (const deadline = Date.now() + 10_000; !(await leased());) {
    if (Date.now() > deadline) assert.fail('the first attempt never took the receipt');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  clock.set(new Date(taken + 13_000));
  await assert.rejects(
    receiptJob.process({ orderNo: order.orderNo }, app.deps),
    // A wait, logged as one (info), not a failure: retried like one all the same.
    (err: Error) => err instanceof BusyJobError && /being sent by another attempt/.test(err.message),
    'still leased 13 s later (3 x 3 s + 5 s = 14 s)',
  );
  clock.set(new Date(taken + 15_000));
  await assert.rejects(
    receiptJob.process({ orderNo: order.orderNo }, app.deps),
    (err: Error) => !/another attempt/.test(err.message),
    'taken again 15 s later: this attempt reached the (silent) server itself',
  );
  // nodemailer's greeting and socket timers are both SMTP_TIMEOUT_MS: either may say so first.
  assert.match(await first, /^(Greeting never received|Timeout)$/, 'the first attempt timed out meanwhile');
});

test('with REDIS_URL the receipt goes through BullMQ the same way: retried after a 451, sent once', async (t) => {
  const smtp = await startSmtp(t, (nth) => (nth === 0 ? 451 : 250));
  const redis = await startRedis(t);
  const app = await startApp(t, { SMTP_URL: smtp.url, REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });
  const runtime = createBullRuntime(app.deps, {
    pollMs: 20,
    jobOptions: { attempts: 3, backoff: { type: 'fixed', delay: 5 }, removeOnFail: false },
    withWorkers: true,
  });
  runtime.start();
  onCleanup(t, () => runtime.stop());
  const order = await payAt(t, app, 'SBX00');
  await runtime.drain();
  assert.equal(smtp.received.length, 1);
  assert.deepEqual(
    (await app.deps.store.receipts.of(order.orderNo))?.attempts.map((a) => a.outcome),
    ['failed', 'sent'],
  );
});
