/**
 * Every write a web process makes on SQLite (in embedded mode the pipeline's jobs run there too) when
 * another process holds the write lock: each waits on a timer in the connection's group commit, never in
 * SQLite's sleeping busy handler, so the thread keeps serving; it settles only once committed (decisions
 * 231, 232).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { RECEIPT_QUEUE, RECON_EMAIL_QUEUE } from '../../core/queues.ts';
import { openStore } from '../../core/store/index.ts';
import { onCleanup, tempDir } from '../helpers.ts';

type Write = [name: string, write: () => Promise<unknown>, landed: () => boolean];

const NOW = new Date('2026-11-20T02:00:00.000Z');
const LATER = '2026-11-21T02:00:00.000Z';

void test('small writes wait for a write lock another connection holds without blocking the thread, and commit once it is free', async (t) => {
  const store = openStore(path.join(tempDir(t), 'amil.db'));
  onCleanup(t, () => store.close());
  await store.agencies.create({ code: 'LZS', name: 'LZS', apiKey: 'key-lzs', now: NOW });
  const user = await store.dashboardUsers.create({
    email: 'admin@lzs.example.my',
    name: 'Admin',
    passwordHash: 'h',
    memberships: [{ agency: 'LZS', role: 'admin' }],
    now: NOW,
  });
  assert.ok(user);
  const raw = new Database(store.file);
  onCleanup(t, () => raw.close());
  const count = (sql: string) => raw.prepare(sql).pluck().get() as number;

  const writes: Write[] = [
    [
      'an agency created',
      () => store.agencies.create({ code: 'PPZ', name: 'PPZ', apiKey: 'key-ppz', now: NOW }),
      () => count("SELECT count(*) FROM agencies WHERE code = 'PPZ'") === 1,
    ],
    [
      "an agency's settings",
      () => store.agencies.update('LZS', { name: 'Lembaga Zakat Selangor' }),
      () => count("SELECT count(*) FROM agencies WHERE name = 'Lembaga Zakat Selangor'") === 1,
    ],
    [
      "an agency's key rotated",
      () => store.agencies.rotateKey('LZS', 'key-lzs-2', NOW),
      () => count("SELECT count(*) FROM agencies WHERE api_key = 'key-lzs-2'") === 1,
    ],
    [
      'a dashboard session',
      () =>
        store.dashboardUsers.createSession(
          {
            idSha256: 's1',
            userId: user.id,
            csrf: 'c',
            pendingTotp: false,
            createdAt: NOW.toISOString(),
            lastSeenAt: NOW.toISOString(),
            expiresAt: LATER,
          },
          { passwordHash: 'h' },
        ),
      () => count("SELECT count(*) FROM dashboard_sessions WHERE id_sha256 = 's1'") === 1,
    ],
    [
      'a dashboard session seen',
      () => store.dashboardUsers.touchSession('s1', new Date(LATER)),
      () => count(`SELECT count(*) FROM dashboard_sessions WHERE last_seen_at = '${LATER}'`) === 1,
    ],
    [
      'an audit entry',
      () =>
        store.dashboardUsers.recordAudit({
          at: NOW.toISOString(),
          agency: 'LZS',
          userId: user.id,
          userEmail: 'admin@lzs.example.my',
          action: 'token.mint',
          target: 'j1',
          detail: null,
        }),
      () => count("SELECT count(*) FROM dashboard_audit WHERE target = 'j1'") === 1,
    ],
    [
      'a TOTP step used',
      () => store.dashboardUsers.useTotpStep(user.id, 42),
      () => count('SELECT count(*) FROM dashboard_users WHERE totp_last_step = 42') === 1,
    ],
    [
      'a report token',
      () =>
        store.reportTokens.record({
          jti: 'j1',
          agencies: ['LZS'],
          label: 'l',
          issuedAt: NOW.toISOString(),
          expiresAt: LATER,
        }),
      () => count("SELECT count(*) FROM report_tokens WHERE jti = 'j1'") === 1,
    ],
    [
      'a report token revoked',
      () => store.reportTokens.revoke('j1', NOW),
      () => count('SELECT count(*) FROM report_tokens WHERE revoked_at IS NOT NULL') === 1,
    ],
    [
      'a QR code',
      () =>
        store.qrCodes.create({
          token: 'q1',
          agencyCode: 'LZS',
          kind: 'pay-url',
          content: 'x',
          createdAt: NOW.toISOString(),
          expiresAt: LATER,
        }),
      () => count("SELECT count(*) FROM qr_codes WHERE token = 'q1'") === 1,
    ],
    [
      "a sandbox acquirer's payment",
      () =>
        store.sandbox.create({
          ref: 'sb1',
          orderNo: 'AM1',
          method: 'fpx',
          bankId: null,
          amountSen: 1000,
          outcome: null,
          txnId: 't1',
          createdAt: NOW.toISOString(),
          decidedAt: null,
          returnPath: '/return',
        }),
      () => count("SELECT count(*) FROM sandbox_payments WHERE ref = 'sb1'") === 1,
    ],
    [
      'its outcome',
      () => store.sandbox.decide('sb1', '00', [], NOW.toISOString()),
      () => count("SELECT count(*) FROM sandbox_payments WHERE outcome = '00'") === 1,
    ],
    [
      'a partner password',
      () => store.partners.addPassword({ partnerId: 'bank', label: 'main', hash: 'h', now: NOW }),
      () => count("SELECT count(*) FROM partner_passwords WHERE partner_id = 'bank'") === 1,
    ],
  ];

  await eachUnderHeldLock(raw, writes);
});

void test('payments, callbacks, receipts, outbox rows, nightly runs and the readiness probe wait for the write lock the same way', async (t) => {
  const store = openStore(path.join(tempDir(t), 'amil.db'));
  onCleanup(t, () => store.close());
  const at = NOW.toISOString();
  await store.agencies.create({ code: 'LZS', name: 'LZS', apiKey: 'key-lzs', now: NOW });
  const order = (orderNo: string, refNo: string) => ({
    orderNo,
    agencyCode: 'LZS',
    refNo,
    extraData: null,
    paymentCategory: null,
    amountSen: 1000,
    email: 'payer@example.my',
    returnUrl: 'http://127.0.0.1:9/return',
    formToken: `form-${orderNo}`,
    at,
  });
  await store.orders.createOrder(order('AM1', 'R1'));
  await store.orders.createOrder(order('AM3', 'R3'));
  const raw = new Database(store.file);
  onCleanup(t, () => raw.close());
  const value = (sql: string) => raw.prepare(sql).pluck().get() as number;
  const count = value;
  const outboxCount = (where: string) => count(`SELECT count(*) FROM outbox WHERE ${where}`);
  let runId = 0;
  // A job waiting in the outbox, for the steps that fail and re-drive one.
  raw
    .prepare(`INSERT INTO outbox (queue, job_id, payload, created_at) VALUES (?, 'receipt.AM9', '{}', ?)`)
    .run(RECEIPT_QUEUE, at);

  const writes: Write[] = [
    [
      'a payment stored as given',
      () =>
        store.orders.insert(
          {
            ...order('AM2', 'R2'),
            addChargeSen: 0,
            paymentMethod: 'fpx',
            status: 'success',
            debitAuthCode: '00',
            fpxTxnId: 'T2',
            fpxTxnTime: at,
            createdAt: at,
            updatedAt: at,
            source: 'checkout',
            payLink: null,
          },
          'acquirer',
        ),
      () => count("SELECT count(*) FROM payment_events WHERE order_no = 'AM2'") === 1,
    ],
    [
      "a payer's attempt",
      () =>
        store.orders.startAttempt('AM1', {
          paymentMethod: 'fpx',
          bankId: 'TEST0021',
          bankName: 'Test Bank',
          addChargeSen: 0,
          acquirerRef: 'sb-1',
          at,
        }),
      () => count("SELECT count(*) FROM payments WHERE acquirer_ref = 'sb-1'") === 1,
    ],
    [
      "the acquirer's result, with its callback and receipt",
      () =>
        store.orders.settle(
          'AM1',
          { status: 'success', code: '00', txnId: 'T1', txnTime: at, source: 'sandbox' },
          at,
          () => ({ url: 'http://127.0.0.1:9/return', fields: { Status: '1' } }),
          () => 'payer@example.my',
        ),
      () =>
        count("SELECT count(*) FROM payments WHERE order_no = 'AM1' AND status = 'success'") === 1 &&
        count("SELECT count(*) FROM callbacks WHERE order_no = 'AM1'") === 1 &&
        count("SELECT count(*) FROM receipts WHERE order_no = 'AM1'") === 1,
    ],
    [
      'callbacks leased',
      () => store.callbacks.leaseDue(10, at, LATER),
      () => count('SELECT count(*) FROM callbacks WHERE lease_until IS NOT NULL') === 1,
    ],
    [
      'a callback redelivered by ops',
      () => store.callbacks.redeliver('AM1', at),
      () => count("SELECT count(*) FROM callbacks WHERE order_no = 'AM1'") === 2,
    ],
    [
      "the readiness probe's heartbeat",
      () => store.ops.heartbeat(new Date(LATER)),
      () => count(`SELECT count(*) FROM health_heartbeat WHERE at = '${LATER}'`) === 1,
    ],
    [
      'outbox rows handed to Redis',
      () => store.outbox.markSentMany([value(`SELECT id FROM outbox WHERE job_id = 'receipt.AM1'`)], NOW),
      () => outboxCount(`queue = '${RECEIPT_QUEUE}' AND sent_at IS NOT NULL`) === 1,
    ],
    [
      'a job that can never succeed',
      () => store.outbox.markFailedForGood('receipt.AM9', 'bad payload', NOW),
      () => outboxCount("job_id = 'receipt.AM9' AND failed_at IS NOT NULL") === 1,
    ],
    [
      'a failed attempt past its horizon',
      () =>
        store.outbox.markAttemptFailed(
          value(`SELECT id FROM outbox WHERE job_id = 'receipt.AM9'`),
          'refused',
          NOW,
          NOW,
          true,
        ),
      () => outboxCount("last_error = 'refused' AND failed_at IS NOT NULL") === 1,
    ],
    [
      'failed rows re-driven',
      () => store.outbox.redriveDue(new Date(LATER)),
      () => outboxCount("last_error = 'refused' AND failed_at IS NULL") === 1,
    ],
    [
      'failed rows retried by ops',
      () => store.outbox.retryFailed(),
      () => outboxCount('failed_at IS NOT NULL') === 0,
    ],
    [
      "a receipt's lease",
      () => store.receipts.claim('AM1', at, LATER),
      () => count('SELECT count(*) FROM receipts WHERE lease_until IS NOT NULL') === 1,
    ],
    [
      "a receipt's attempt",
      () =>
        store.receipts.recordAttempt(value("SELECT id FROM receipts WHERE order_no = 'AM1'"), {
          attempt: 1,
          at,
          outcome: 'sent',
          messageId: '<m1@amil>',
          detail: null,
        }),
      () => count("SELECT count(*) FROM receipts WHERE state = 'sent'") === 1,
    ],
    [
      'a nightly run recorded with its e-mail',
      async () => {
        runId = (
          await store.reconRuns.record({
            sink: 'LZS',
            businessDate: '2026-11-19',
            trigger: 'nightly',
            asOf: at,
            startedAt: at,
            finishedAt: at,
            fingerprint: 'f',
            file: 'recon/LZS/2026-11-19.xlsx',
            fileSha256: 's',
            fileBytes: 1,
            inputCounts: {},
            totals: {},
            changes: null,
            email: true,
          })
        ).id;
      },
      () =>
        count('SELECT count(*) FROM recon_runs') === 1 && outboxCount(`queue = '${RECON_EMAIL_QUEUE}'`) === 1,
    ],
    [
      "a run's e-mail asked for again",
      () => store.reconRuns.requestRemail(runId, at),
      () => outboxCount(`queue = '${RECON_EMAIL_QUEUE}'`) === 2,
    ],
    [
      "a run's e-mail delivery",
      () =>
        store.reconRuns.recordDelivery({
          runId,
          recipients: ['ops@lzs.example.my'],
          attempt: 1,
          at,
          outcome: 'sent',
          messageId: '<r1@amil>',
          detail: null,
        }),
      () => count('SELECT count(*) FROM recon_deliveries') === 1,
    ],
  ];
  await eachUnderHeldLock(raw, writes);
});

/** Runs each write while `raw` holds the write lock: the thread stays free, and the write lands after. */
async function eachUnderHeldLock(raw: Database.Database, writes: readonly Write[]): Promise<void> {
  for (const [name, write, landed] of writes) {
    // Another process (a worker on the same file, an operator's sqlite3 shell) holds the write lock.
    raw.exec('BEGIN IMMEDIATE');
    let settled = false;
    const done = write().finally(() => (settled = true));
    const t0 = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
    // SQLite's own busy wait would have held this thread, and so this timer, until the lock wait ran out.
    const late = Date.now() - t0;
    assert.ok(late < 150, `${name}: the timer ran ${late} ms later, while the write waited for the lock`);
    assert.equal(settled, false, `${name}: not settled before it is committed`);
    raw.exec('COMMIT');
    await done;
    assert.ok(landed(), `${name}: committed once the lock was free`);
  }
}
