import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { fixedClock } from '../../core/clock.ts';
import { runReconciliation } from '../../pipeline/recon/run-day.ts';
import { reconEmailJob, reconNightlyJob } from '../../pipeline/jobs/recon.ts';
import { startApp, type TestApp } from '../helpers.ts';
import { startPostgres } from '../support/postgres.ts';
import { AS_OF, DAY, generateDay } from '../support/recon-day.ts';
import { drainPipeline, loadDay } from '../support/recon-load.ts';
import { startSmtp } from '../support/smtp.ts';
import { readWorkbook, sen, summaryOf } from '../support/workbook.ts';
import { formatSen } from '../../core/money.ts';

// A failed e-mail waits at least a second (the clock stands still until a test moves it).
const drain = (app: TestApp) => drainPipeline(app, { backoffMs: 1000 });

test('the workbook is e-mailed over SMTP to the agency, retried, every delivery recorded', async (t) => {
  const smtp = await startSmtp(t, (nth) => (nth === 0 ? 451 : 250));
  const app = await loadDay(t, generateDay(120), { SMTP_URL: smtp.url, MAIL_FROM: 'amil <recon@amil.test>' });
  await drain(app);
  const { run, summary } = await runReconciliation(app.deps, {
    sink: 'LZS',
    day: DAY,
    trigger: 'manual',
    asOf: AS_OF,
  });
  await drain(app); // the server answers 451: the attempt is recorded and retried later
  (app.deps.clock as ReturnType<typeof fixedClock>).set(new Date(AS_OF.getTime() + 60_000));
  await drain(app);

  assert.equal(smtp.received.length, 1);
  const { to, mail } = smtp.received[0]!;
  assert.deepEqual(to, ['kewangan@lzs.example.my']);
  assert.deepEqual(mail.from?.value, [{ name: 'amil', address: 'recon@amil.test' }]);
  assert.equal(mail.subject, `Zakat reconciliation ${DAY}: Lembaga Zakat Selangor`);
  // The body carries the day's headline totals (ringgit with thousands separators).
  const collected = /Collected \(success\): (\d+) transaction\(s\), RM ([\d,]+\.\d\d)/.exec(mail.text ?? '');
  assert.equal(Number(collected?.[1]), summary.byStatus.success.count);
  assert.equal(collected?.[2]?.replace(/,/g, ''), formatSen(summary.byStatus.success.sumSen));
  assert.match(collected?.[2] ?? '', /^\d{1,3}(,\d{3})+\.\d\d$/, 'grouped by thousands');
  assert.match(mail.text ?? '', /as of 2026-11-21 00:30:00 \(UTC\+8\)\./);
  assert.match(mail.text ?? '', /Pending roll \(opening \+ movements = closing\): balances/);

  // The attachment is the run's workbook, byte for byte, and opens with exceljs.
  assert.equal(mail.attachments.length, 1);
  const attachment = mail.attachments[0]!;
  assert.equal(attachment.filename, path.basename(run.file));
  assert.equal(attachment.contentType, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  assert.ok(attachment.content.equals(readFileSync(path.join(app.dataDir, run.file))));
  const book = await readWorkbook(attachment.content);
  const s = summaryOf(book.sheet('Summary'));
  assert.equal(sen(s.table('By status').get('success')?.[1]), summary.byStatus.success.sumSen);

  const deliveries = await app.deps.store.reconRuns.deliveries(run.id);
  assert.deepEqual(
    deliveries.map((d) => [d.attempt, d.outcome]),
    [
      [1, 'failed'],
      [2, 'sent'],
    ],
  );
  assert.match(deliveries[0]!.detail ?? '', /451/);
  // The server quoted the agency's address as it refused: not kept (nor thrown into logs and Redis).
  assert.doesNotMatch(deliveries[0]!.detail ?? '', /@/);
  assert.equal(deliveries[1]!.messageId, mail.messageId);

  // A second run of the job for the same run sends nothing more.
  await app.deps.store.outbox.enqueue('recon-email', 'recon-email.again', { runId: run.id }, new Date());
  await drain(app);
  assert.equal(smtp.received.length, 1);
});

test('without SMTP_URL the e-mail is written as an .eml file under DATA_DIR/mail', async (t) => {
  const app = await loadDay(t, generateDay(120));
  await drain(app);
  const { run } = await runReconciliation(app.deps, {
    sink: 'PPZ',
    day: DAY,
    trigger: 'manual',
    asOf: AS_OF,
  });
  await drain(app);
  const dir = path.join(app.dataDir, 'mail');
  const files = readdirSync(dir).filter((f) => f.endsWith('.eml'));
  assert.equal(files.length, 1);
  const mail = await simpleParser(readFileSync(path.join(dir, files[0]!)));
  assert.equal(mail.subject, `Zakat reconciliation ${DAY}: Pusat Pungutan Zakat MAIWP`);
  assert.equal(mail.attachments[0]?.filename, path.basename(run.file));
  const [delivery] = await app.deps.store.reconRuns.deliveries(run.id);
  assert.equal(delivery?.outcome, 'sent');
  assert.equal(delivery?.detail, path.join('mail', files[0]!));
});

test('the nightly job builds every agency and the bank test report once, for the day before', async (t) => {
  const app = await loadDay(t, generateDay(120), { BANK_TEST_RECIPIENTS: 'ops@bank.example.my' });
  await drain(app);
  (app.deps.clock as ReturnType<typeof fixedClock>).set(AS_OF);
  await reconNightlyJob.process({}, app.deps);
  await reconNightlyJob.process({}, app.deps); // runs again (a retry): nothing new
  const runs = await app.deps.store.reconRuns.list({ limit: 10 });
  assert.deepEqual(runs.map((r) => [r.sink, r.businessDate, r.trigger]).sort(), [
    ['#test', DAY, 'nightly'],
    ['LZS', DAY, 'nightly'],
    ['PPZ', DAY, 'nightly'],
  ]);
  assert.ok(
    runs.every((r) => r.asOf === AS_OF.toISOString()),
    'one as-of for the night',
  );
  await drain(app);
  const mails = readdirSync(path.join(app.dataDir, 'mail'));
  assert.equal(mails.length, 3, 'each agency and the bank test recipients');
});

test('a re-run of a day is mailed as a correction of the earlier e-mail, says what changed, with an HTML part', async (t) => {
  const generated = generateDay(120);
  const app = await loadDay(t, generated);
  await drain(app);
  const mailDir = path.join(app.dataDir, 'mail');
  const mails = async () =>
    Promise.all(
      readdirSync(mailDir)
        .filter((f) => f.endsWith('.eml'))
        .sort()
        .map((f) => simpleParser(readFileSync(path.join(mailDir, f)))),
    );
  await runReconciliation(app.deps, { sink: 'PPZ', day: DAY, trigger: 'manual', asOf: AS_OF });
  await drain(app);
  const [first] = await mails();
  assert.equal(first?.subject, `Zakat reconciliation ${DAY}: Pusat Pungutan Zakat MAIWP`);
  // The HTML part beside the text carries the same headline figures.
  assert.match(first?.html || '', /<table[\s\S]*Collected \(success\)[\s\S]*<\/table>/);
  assert.match(first?.text ?? '', /Collected \(success\)/);

  // A pending PPZ posting settles after the nightly read; the day is run again as of later.
  const pending = generated.items.find(
    (i) =>
      i.sink === 'PPZ' &&
      i.channel === 'bank' &&
      i.businessDate === DAY &&
      i.versions.at(-1)!.status === 'pending' &&
      i.versions.at(-1)!.at < AS_OF.getTime(),
  )!;
  const record = generated.batches
    .flatMap((b) => b.records)
    .filter((r) => r.orderno === pending.id)
    .at(-1)!;
  const later = new Date(AS_OF.getTime() + 3_600_000);
  (app.deps.clock as ReturnType<typeof fixedClock>).set(later);
  assert.equal((await app.postBatch({ transactions: [{ ...record, status: 'success' }] })).status, 200);
  await drain(app);
  const { run } = await runReconciliation(app.deps, {
    sink: 'PPZ',
    day: DAY,
    trigger: 'manual',
    asOf: new Date(later.getTime() + 60_000), // after the update was received
  });
  await drain(app);

  const all = await mails();
  assert.equal(all.length, 2);
  const correction = all.find((m) => m.messageId !== first?.messageId)!;
  assert.equal(
    correction.subject,
    `Correction: Zakat reconciliation ${DAY}: Pusat Pungutan Zakat MAIWP (replaces run ${run.previousRun})`,
  );
  // Threaded under the earlier e-mail, and it says what changed, in the text and in the HTML.
  assert.equal(correction.inReplyTo, first?.messageId);
  assert.match(correction.text ?? '', new RegExp(`corrects the workbook of run ${run.previousRun}`));
  assert.match(correction.text ?? '', /What changed: \d+ cell\(s\)/);
  assert.match(correction.text ?? '', /Transactions![A-Z]+\d+: "pending" -> "success"/);
  assert.match(
    correction.html || '',
    /Transactions![A-Z]+\d+: &quot;pending&quot; -&gt; &quot;success&quot;/,
  );
  assert.match(correction.text ?? '', /Collected \(success\)/);
});

test('a re-run that finds the same records is mailed as an unchanged re-run, not as a correction', async (t) => {
  const app = await loadDay(t, generateDay(120));
  await drain(app);
  await runReconciliation(app.deps, { sink: 'PPZ', day: DAY, trigger: 'manual', asOf: AS_OF });
  const later = new Date(AS_OF.getTime() + 600_000);
  (app.deps.clock as ReturnType<typeof fixedClock>).set(later);
  const { run } = await runReconciliation(app.deps, {
    sink: 'PPZ',
    day: DAY,
    trigger: 'manual',
    asOf: later,
  });
  await drain(app);
  const dir = path.join(app.dataDir, 'mail');
  const subjects = await Promise.all(
    readdirSync(dir).map(async (f) => (await simpleParser(readFileSync(path.join(dir, f)))).subject),
  );
  assert.deepEqual(subjects.sort(), [
    `Re-run, no change: Zakat reconciliation ${DAY}: Pusat Pungutan Zakat MAIWP (same figures as run ${run.previousRun})`,
    `Zakat reconciliation ${DAY}: Pusat Pungutan Zakat MAIWP`,
  ]);
});

test('while the store cannot record an attempt, the workbook is not e-mailed; once it can, once (postgresql)', async (t) => {
  const smtp = await startSmtp(t);
  const postgres = await startPostgres(t);
  const app = await startApp(
    t,
    {
      DATABASE_URL: await postgres.createTestDatabase(),
      SMTP_URL: smtp.url,
      MAIL_FROM: 'amil <recon@amil.test>',
    },
    { clock: fixedClock(new Date(AS_OF.getTime() + 60_000)) },
  );
  const { run } = await runReconciliation(app.deps, {
    sink: 'LZS',
    day: DAY,
    trigger: 'manual',
    asOf: AS_OF,
    mail: false,
  });

  // A failover: the database answers reads and refuses writes. Each retry of the job fails before sending
  // (it sent, and failed to record the send, at every retry: 11 copies in a 10-second failover).
  await postgres.takeWrites(false);
  for (let retry = 0; retry < 3; retry += 1)
    await assert.rejects(reconEmailJob.process({ runId: run.id }, app.deps), /read-only|standby|writes/i);
  assert.equal(smtp.received.length, 0, 'nothing sent while no attempt could be recorded');

  await postgres.takeWrites(true);
  await reconEmailJob.process({ runId: run.id }, app.deps);
  await reconEmailJob.process({ runId: run.id }, app.deps); // run again: already sent
  assert.equal(smtp.received.length, 1);
  const messageId = `<recon.${run.id}.1.${run.fileSha256.slice(0, 12)}@amil.test>`;
  assert.equal(smtp.received[0]?.mail.messageId, messageId);
  const deliveries = await app.deps.store.reconRuns.deliveries(run.id);
  assert.deepEqual(
    deliveries.map((d) => [d.attempt, d.outcome, d.messageId]),
    [[1, 'sent', messageId]],
  );
});
