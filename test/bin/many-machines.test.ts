/**
 * Issue 17's many-machines test: two web processes and two workers, separate processes on loopback, on one
 * PostgreSQL and one Redis. A day of bank batches is posted across both web processes; one web process and
 * one worker are killed with SIGKILL midway and restarted. Every posting reaches its agency's ledger once,
 * the nightly run of the day happens once however often it is triggered, and its workbooks are the same
 * bytes as an embedded (SQLite) replay of the same inputs as of the same instant.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Queue } from 'bullmq';
import { RECON_NIGHTLY_QUEUE } from '../../core/queues.ts';
import { businessDate, prevDay } from '../../core/time.ts';
import { DEMO_PASSWORD, bankRecord, tempDir } from '../helpers.ts';
import { startPostgres } from '../support/postgres.ts';
import { startRedis } from '../support/redis.ts';
import { startSmtp } from '../support/smtp.ts';
import {
  clusterEnv,
  complaints,
  killHard,
  payAcross,
  pipelineState,
  queryRows,
  startMachine,
  waitUntil,
  workbookOf,
} from '../support/many-machines.ts';
import { runCli } from './processes.ts';
import { LZS_KEY, startMerchant } from '../support/merchant.ts';
import { verifyCallback } from '../../core/signatures.ts';

const BATCHES = 24;
const PER_BATCH = 25;
const ORDERS = 8;

test('two web processes and two workers on one PostgreSQL and one Redis survive a SIGKILL each and converge once', async (t) => {
  const postgres = await startPostgres(t);
  const redis = await startRedis(t);
  const smtp = await startSmtp(t);
  const merchant = await startMerchant(t);
  const env = clusterEnv(postgres, redis, {
    SMTP_URL: smtp.url,
    // A receipt a killed worker was sending is free again after seconds (three times this, plus 5 s).
    SMTP_TIMEOUT_MS: '2000',
    CALLBACK_RETRY_MS: '200',
    // A killed worker's jobs come back after seconds, not the production minute, to keep the test short.
    WORKER_LOCK_MS: '3000',
    // A killed worker's leased callbacks are taken again after 2 x (this + 5 s) = 14 s (decision 218).
    CALLBACK_TIMEOUT_MS: '2000',
    PIPELINE_RECONCILE_MS: '2000',
    PIPELINE_RECONCILE_GRACE_MS: '5000',
  });
  // Yesterday in Kuala Lumpur: a day already over, as the nightly run reads it.
  const day = prevDay(businessDate(new Date()));

  const webs = [await startMachine(t, 'web', env), await startMachine(t, 'web', env)];
  const workers = [await startMachine(t, 'worker', env), await startMachine(t, 'worker', env)];

  /** waitUntil, and on giving up where the work stopped and what the machines said (for CI's log). */
  const waitFor = (check: () => Promise<boolean>, what: string) =>
    waitUntil(check, what).catch(async (error: unknown) => {
      t.diagnostic(await pipelineState(postgres.url, redis));
      for (const m of [...webs, ...workers]) t.diagnostic(`${m.dir}:\n${complaints(m)}`);
      throw error;
    });

  const agencies = ['BANKLZS', 'BANKPPZ'] as const;
  const sent = new Set<string>();
  const post = async (nth: number) => {
    const records = Array.from({ length: PER_BATCH }, (_, i) =>
      bankRecord({
        agency: agencies[(nth + i) % 2],
        amount: Number(((1100 + nth * PER_BATCH + i) / 100).toFixed(2)),
        time: `${day}T${String(1 + (nth % 20)).padStart(2, '0')}:${String(i).padStart(2, '0')}:00+08:00`,
      }),
    );
    const web = webs[nth % 2]!;
    const response = await fetch(`${web.process.url}/api/bank/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD },
      body: JSON.stringify({ transactions: records }),
    });
    assert.equal(response.status, 200, await response.text());
    for (const r of records) sent.add(r.orderno);
  };

  const orders: string[] = [];
  const pay = async (nth: number) => {
    const [a, b] = nth % 2 === 0 ? [webs[0]!, webs[1]!] : [webs[1]!, webs[0]!];
    orders.push(await payAcross(a.process.url, b.process.url, `${merchant.url}/callback`, nth));
  };
  for (let nth = 0; nth < BATCHES / 2; nth += 1) {
    await post(nth);
    if (nth < ORDERS / 2) await pay(nth);
  }
  // Midway: one web process and one worker die without warning, while the other worker is busy.
  await killHard(webs[1]!);
  await killHard(workers[0]!);
  // Taken once the worker is dead, not before the kills: until then it may still send a receipt or a
  // callback it will not live to record, which is sent again (seen once in a run of three files at once).
  const killedAt = Date.now();
  webs[1] = await startMachine(t, 'web', env, webs[1]!.dir);
  workers[0] = await startMachine(t, 'worker', env, workers[0]!.dir);
  for (let nth = BATCHES / 2; nth < BATCHES; nth += 1) {
    await post(nth);
    if (nth - BATCHES / 2 < ORDERS / 2) await pay(nth);
  }

  const ledgered = async () =>
    Number((await queryRows<{ n: string }>(postgres.url, 'SELECT count(*) AS n FROM ledger_entries'))[0]!.n);
  await waitFor(async () => (await ledgered()) >= sent.size, 'every posting in a ledger');
  // Give a double delivery the time to show itself before counting.
  await new Promise((r) => setTimeout(r, 1000));

  await t.test('every posting reaches its agency once', async () => {
    const rows = await queryRows<{ n: string; distinct_n: string }>(
      postgres.url,
      'SELECT count(*) AS n, count(DISTINCT (sink, posting_id)) AS distinct_n FROM ledger_entries',
    );
    assert.equal(Number(rows[0]!.n), sent.size, 'one ledger entry per posting');
    assert.equal(Number(rows[0]!.distinct_n), sent.size, 'no posting twice');
  });

  /**
   * Delivery is at least once: what a worker had sent when it was killed, before it could record the answer,
   * is sent again under the same id (the callback id, the receipt's Message-ID), which the merchant and the
   * mail client recognise. So each thing arrives once, or more often only when its first copy arrived before
   * the kill; and never as two different callbacks or messages.
   */
  const onceOrRepeatedAcrossTheKill = (copies: Map<string, { id: string; at: number }[]>, what: string) => {
    for (const [key, list] of copies) {
      assert.equal(new Set(list.map((c) => c.id)).size, 1, `${what} ${key}: one id however often it came`);
      if (list.length > 1)
        assert.ok(
          list[0]!.at < killedAt,
          `${what} ${key}: repeated, but its first copy came after the kill (copies at ` +
            `${list.map((c) => `${c.at - killedAt} ms`).join(', ')} from it)`,
        );
    }
  };

  await t.test(
    'every callback reaches the merchant once per status, signed with the agency key',
    async () => {
      const direct = () => merchant.received.filter((r) => r.headers['x-amil-callback-id'] !== undefined);
      await waitFor(
        () => Promise.resolve(new Set(direct().map((r) => r.form.get('orderNo'))).size === ORDERS),
        'a direct callback of every order',
      );
      // Give a second delivery the time to show itself before counting.
      await new Promise((r) => setTimeout(r, 1000));
      const seen = new Map<string, { id: string; at: number }[]>();
      for (const callback of direct()) {
        assert.ok(verifyCallback(callback.form, LZS_KEY), 'the signature verifies');
        const key = `${callback.form.get('orderNo')} ${callback.form.get('status')}`;
        const id = String(callback.headers['x-amil-callback-id']);
        seen.set(key, [...(seen.get(key) ?? []), { id, at: callback.at }]);
      }
      assert.deepEqual(
        [...seen.keys()].sort(),
        orders.map((o) => `${o} success`).sort(),
        'each order’s status',
      );
      onceOrRepeatedAcrossTheKill(seen, 'callback');
    },
  );

  await t.test(
    'the nightly run, triggered on both workers, happens and is e-mailed once per sink and day',
    async () => {
      const queue = new Queue(RECON_NIGHTLY_QUEUE, {
        connection: { url: redis.url },
        prefix: redis.prefix,
      });
      try {
        // Two firings of the same night (as two schedulers would): different job ids, so Redis keeps both.
        await queue.addBulk([
          { name: RECON_NIGHTLY_QUEUE, data: { day }, opts: { jobId: `many-a.${day}` } },
          { name: RECON_NIGHTLY_QUEUE, data: { day }, opts: { jobId: `many-b.${day}` } },
        ]);
        await waitFor(
          async () => (await queue.getJobCounts('completed')).completed === 2,
          'both nightly jobs completed',
        );
      } finally {
        await queue.close();
      }
      const runs = await queryRows<{ sink: string; n: string }>(
        postgres.url,
        `SELECT sink, count(*) AS n FROM recon_runs WHERE business_date = $1 AND trigger = 'nightly'
       GROUP BY sink ORDER BY sink`,
        [day],
      );
      assert.ok(runs.length >= 2, 'a run for each agency');
      for (const run of runs) assert.equal(Number(run.n), 1, `${run.sink}: one nightly run`);
      // Each agency's workbook is e-mailed once (the demo agencies' report recipients); the payers'
      // receipts, one per paid order, go to the same SMTP server.
      const agencyMail = ['kewangan@lzs.example.my', 'laporan@ppz.example.my'];
      const mailed = () => smtp.received.flatMap((m) => m.to).filter((to) => to !== 'ali@example.my');
      const receipts = () => smtp.received.filter((m) => m.to.includes('ali@example.my'));
      const receiptsOf = () => new Set(receipts().map((m) => m.mail.messageId));
      await waitFor(
        () => Promise.resolve(mailed().length >= agencyMail.length && receiptsOf().size >= ORDERS),
        `the e-mails (agencies: ${mailed().join(', ') || 'none'}; receipts: ${receiptsOf().size} of ${ORDERS})`,
      );
      await new Promise((r) => setTimeout(r, 1000));
      assert.deepEqual(mailed().sort(), agencyMail);
      const byMessage = new Map<string, { id: string; at: number }[]>();
      for (const receipt of receipts()) {
        const order = /receipt\.(\w+)@/.exec(receipt.mail.messageId ?? '')?.[1] ?? '';
        byMessage.set(order, [
          ...(byMessage.get(order) ?? []),
          { id: receipt.mail.messageId ?? '', at: receipt.at },
        ]);
      }
      assert.deepEqual([...byMessage.keys()].sort(), [...orders].sort(), 'a receipt of every paid order');
      onceOrRepeatedAcrossTheKill(byMessage, 'receipt');
    },
  );

  await t.test('the workbooks are byte-identical to an embedded replay of the same inputs', async () => {
    const runs = await queryRows<{ sink: string; file: string; as_of: Date }>(
      postgres.url,
      `SELECT sink, file, as_of FROM recon_runs WHERE business_date = $1 AND trigger = 'nightly'`,
      [day],
    );
    assert.ok(runs.length >= 2, 'the nightly runs to compare');
    // Each worker's job reads the night as of its own instant; whichever recorded a sink first, its
    // instant is the one to replay that sink's day at.
    for (const asOf of new Set(runs.map((r) => r.as_of.toISOString()))) {
      const exported = tempDir(t);
      const exportDay = await runCli(['export-day', '--day', day, '--as-of', asOf, '--out', exported], env);
      assert.equal(exportDay.code, 0, exportDay.stderr);
      // The embedded run: SQLite under a data directory of its own, no DATABASE_URL, no Redis.
      const out = tempDir(t);
      const replay = await runCli(
        ['replay', '--day', day, '--from', exported, '--as-of', asOf, '--out', out],
        { DATA_DIR: tempDir(t) },
      );
      assert.equal(replay.code, 0, replay.stderr + replay.stdout);
      for (const run of runs.filter((r) => r.as_of.toISOString() === asOf)) {
        const original = readFileSync(workbookOf(workers, run.file));
        const replayed = readFileSync(path.join(out, path.basename(run.file)));
        assert.ok(original.length > 4000, `${run.sink}: a workbook with content`);
        assert.ok(replayed.equals(original), `${run.sink}: the embedded workbook differs`);
      }
    }
  });
});
