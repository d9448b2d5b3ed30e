/**
 * The small writes a web process makes on SQLite outside the webhook and checkout (dashboard sign-ins and
 * sessions, agency settings, report tokens, QR codes, the sandbox acquirer, partner passwords, anomalies)
 * when another process holds the write lock: each waits on a timer in the connection's group commit, never
 * in SQLite's sleeping busy handler, so the thread keeps serving; it settles only once committed.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { openStore } from '../../core/store/index.ts';
import { onCleanup, tempDir } from '../helpers.ts';

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

  const writes: [string, () => Promise<unknown>, () => boolean][] = [
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
        store.dashboardUsers.createSession({
          idSha256: 's1',
          userId: user.id,
          csrf: 'c',
          pendingTotp: false,
          createdAt: NOW.toISOString(),
          lastSeenAt: NOW.toISOString(),
          expiresAt: LATER,
        }),
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
});
