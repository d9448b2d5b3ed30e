import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { hashPassword } from '../../core/passwords.ts';
import { runReconciliation } from '../../pipeline/recon/run-day.ts';
import { reconEmailJob } from '../../pipeline/jobs/recon.ts';
import { csvCell } from '../../reports/dashboard/pages/payments-export.ts';
import { collectionsChart } from '../../reports/dashboard/pages/chart.ts';
import type { TestApp } from '../helpers.ts';
import { AS_OF, DAY, PREV, generateDay, type GeneratedDay } from '../support/recon-day.ts';
import { drainPipeline, loadDay } from '../support/recon-load.ts';
import { readWorkbook } from '../support/workbook.ts';

const PASSWORD = 'a long dashboard password';

/** A browser's cookies, kept across requests (each name's latest value). */
class Client {
  private readonly cookies = new Map<string, string>();
  constructor(readonly base: string) {}

  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0)
      headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const response = await fetch(`${this.base}${path}`, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  }

  async page(path: string): Promise<{ status: number; text: string }> {
    const response = await this.fetch(path);
    // Whitespace collapsed: the templates are formatted for reading, the tests read the text.
    return { status: response.status, text: (await response.text()).replace(/\s+/g, ' ') };
  }

  /** Sends a form as the page at `from` has it (its CSRF field), from this origin. */
  async post(from: string, action: string, fields: Record<string, string> = {}): Promise<Response> {
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await this.page(from)).text)?.[1] ?? '';
    return this.fetch(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: this.base },
      body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
    });
  }
}

/** Signs in through the real sign-in form. */
async function signIn(app: TestApp, email: string): Promise<Client> {
  const client = new Client(app.url);
  const form = await client.page('/dashboard/login');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.text)?.[1] ?? '';
  const response = await client.fetch('/dashboard/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.url },
    body: new URLSearchParams({ _csrf: csrf, email, password: PASSWORD, next: '/dashboard/' }).toString(),
  });
  assert.equal(response.status, 303, `sign-in of ${email}`);
  return client;
}

/** Plain text of a page's table cells, row by row (tags dropped, entities of our escaping undone). */
function rowsOf(page: string, caption: string): string[][] {
  const start = page.indexOf(`<caption> ${caption}`);
  assert.ok(start >= 0, `a table captioned ${caption}`);
  const tableHtml = page.slice(start, page.indexOf('</table>', start));
  return [...tableHtml.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].slice(1).map((row) =>
    [...(row[1] ?? '').matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((cell) =>
      (cell[1] ?? '')
        .replace(/<[^>]+>/g, '')
        .replace(/\s+/g, ' ')
        .replace(/&amp;/g, '&')
        .replace(/&#39;/g, "'")
        .replace(/&quot;/g, '"')
        .trim(),
    ),
  );
}

/** Asserts the page has the pattern, showing only the page's main part when it does not. */
function has(page: string, pattern: RegExp, message?: string): void {
  if (pattern.test(page)) return;
  const main = page.slice(page.indexOf('<main'), page.indexOf('<main') + 1500);
  assert.fail(`${message ?? String(pattern)} not in: ${main}`);
}

function hasNot(page: string, pattern: RegExp, message?: string): void {
  assert.ok(!pattern.test(page), message ?? `${String(pattern)} is not on the page`);
}

const rm = (sen: number) => `RM ${(sen / 100).toFixed(2).replace(/\B(?=(\d{3})+(?!\d))(?=\d*\.)/g, ',')}`;

/** The plan's final state of a sink's day: collected, pending and failed, from the plan alone. */
function dayTruth(generated: GeneratedDay, sink: string, day: string) {
  const out = { count: 0, sumSen: 0, pending: 0, failed: 0 };
  for (const item of generated.items) {
    if (item.sink !== sink || item.businessDate !== day) continue;
    const status = item.versions.at(-1)?.status;
    if (status === 'success') {
      out.count += 1;
      out.sumSen += item.amountSen;
    } else if (status === 'pending') out.pending += 1;
    else if (status === 'failed') out.failed += 1;
  }
  return out;
}

/** Three LZS orders with callbacks: one delivered, one failing and retrying, one given up. */
async function seedCallbacks(app: TestApp): Promise<{ delivered: string; retrying: string; dead: string }> {
  const { orders, callbacks } = app.deps.store;
  const at = new Date(AS_OF.getTime() - 3_600_000).toISOString();
  const names = { delivered: 'CB-DELIVERED', retrying: 'CB-RETRYING', dead: 'CB-DEAD' };
  for (const [kind, orderNo] of Object.entries(names)) {
    await orders.createOrder({
      orderNo,
      agencyCode: 'LZS',
      refNo: `=HYPERLINK("http://evil.example/${kind}")`,
      extraData: null,
      paymentCategory: 'zakat-fitrah',
      amountSen: 2800,
      email: 'payer@example.my',
      returnUrl: 'https://merchant.lzs.example.my/return',
      formToken: 'token',
      at,
    });
    await orders.startAttempt(orderNo, {
      paymentMethod: 'fpx',
      bankId: null,
      bankName: null,
      addChargeSen: 100,
      acquirerRef: `ACQ-${orderNo}`,
      at,
    });
    await orders.settle(
      orderNo,
      { status: 'success', code: '00', txnId: 'T', txnTime: at, source: 'test' },
      at,
      () => ({ url: 'https://merchant.lzs.example.my/callback', fields: { orderNo } }),
    );
    const [callback] = await callbacks.ofOrder(orderNo);
    assert.ok(callback);
    const attempt = (statusCode: number, latencyMs: number) => ({
      at,
      statusCode,
      latencyMs,
      error: null,
      responsePrefix: '',
    });
    if (kind === 'delivered')
      await callbacks.finishAttempt(callback.id, attempt(200, 42), { state: 'delivered' });
    else if (kind === 'dead')
      await callbacks.finishAttempt(callback.id, attempt(500, 1234), { state: 'dead' });
    else
      await callbacks.finishAttempt(callback.id, attempt(503, 777), {
        state: 'queued',
        nextAttemptAt: new Date(AS_OF.getTime() + 3_600_000).toISOString(),
      });
  }
  return names;
}

test('the dashboard pages of an agency', async (t) => {
  const generated = generateDay(240);
  const app = await loadDay(t, generated);
  await drainPipeline(app);
  const callbacks = await seedCallbacks(app);
  const nightly = await runReconciliation(app.deps, {
    sink: 'LZS',
    day: DAY,
    trigger: 'nightly',
    asOf: AS_OF,
  });
  const later = new Date(AS_OF.getTime() + 2 * 3_600_000);
  const rerun = await runReconciliation(app.deps, { sink: 'LZS', day: DAY, trigger: 'manual', asOf: later });
  const ppz = await runReconciliation(app.deps, { sink: 'PPZ', day: DAY, trigger: 'nightly', asOf: AS_OF });
  const users = app.deps.store.dashboardUsers;
  const passwordHash = await hashPassword(PASSWORD);
  for (const [email, role] of [
    ['finance@lzs.example.my', 'admin'],
    ['viewer@lzs.example.my', 'viewer'],
  ] as const) {
    await users.create({
      email,
      name: email,
      passwordHash,
      memberships: [{ agency: 'LZS', role }],
      now: AS_OF,
    });
  }
  const admin = await signIn(app, 'finance@lzs.example.my');
  const viewer = await signIn(app, 'viewer@lzs.example.my');
  const lzs = '/dashboard/a/LZS';
  const lzsOrders = generated.checkout.filter((c) => c.results.length > 0);

  await t.test(
    'the overview shows yesterday’s collected total, pending and failed as the plan has them',
    async () => {
      const page = await admin.page(`${lzs}/`);
      assert.equal(page.status, 200);
      const truth = dayTruth(generated, 'LZS', DAY);
      // And the three paid orders with callbacks seeded on the day, RM 28.00 each.
      truth.count += 3;
      truth.sumSen += 3 * 2800;
      const days = rowsOf(page.text, 'Collections per day');
      assert.equal(days.length, 30);
      assert.deepEqual(days[1]?.slice(0, 5), [
        DAY,
        rm(truth.sumSen),
        String(truth.count),
        String(truth.pending),
        String(truth.failed),
      ]);
      const prev = dayTruth(generated, 'LZS', PREV);
      assert.deepEqual(days[2]?.slice(0, 3), [PREV, rm(prev.sumSen), String(prev.count)]);
      // Today (the clock reads 2026-11-21 00:30 in Kuala Lumpur) has nothing yet.
      assert.deepEqual(days[0]?.slice(0, 3), ['2026-11-21', 'RM 0.00', '0']);
      has(
        page.text,
        new RegExp(`Yesterday <small>${DAY}</small>[\\s\\S]*?${rm(truth.sumSen).replace('.', '\\.')}`),
      );
      // The callbacks failing (retrying and given up) and the conflicting resend of the day (an anomaly).
      has(page.text, /Callbacks failing<\/dt>\s*<dd><a href="[^"]+state=failing">2<\/a>/);
      has(page.text, /Open anomalies<\/dt>\s*<dd>1<\/dd>/);
      has(page.text, new RegExp(`href="${lzs}/reconciliation/${nightly.run.id}">${DAY}<`));
      has(page.text, /E-mail<\/dt>\s*<dd>mail queued<\/dd>/);
      // The chart: an image with a title and a description, one bar per day.
      has(page.text, /<svg[^>]+role="img" aria-labelledby="chart-title chart-desc"/);
      assert.equal((page.text.match(/<rect /g) ?? []).length, 30);
    },
  );

  await t.test(
    'the payments page filters by day, approval, order number, refNo and method, 50 rows a page',
    async () => {
      const all = await admin.page(`${lzs}/payments?start=${PREV}&end=${DAY}`);
      const caption = `Payments from ${PREV} to ${DAY}`;
      const expected = lzsOrders.length + 1 + 3; // the order never paid, the three with callbacks
      has(all.text, new RegExp(`Rows 1–50 of ${expected}`));
      assert.equal(rowsOf(all.text, caption).length, 50);
      const second = await admin.page(`${lzs}/payments?start=${PREV}&end=${DAY}&page=1`);
      assert.equal(rowsOf(second.text, caption).length, expected - 50);
      has(second.text, /rel="prev"/);

      const approved = await admin.page(`${lzs}/payments?start=${PREV}&end=${DAY}&approved=1&method=card`);
      const cards = lzsOrders.filter((c) => c.method === 'card' && c.results.at(-1)?.code === '00');
      assert.equal(rowsOf(approved.text, caption).filter((r) => r.length > 1).length, cards.length);
      for (const row of rowsOf(approved.text, caption)) assert.equal(row[6], 'success');

      const one = lzsOrders[3]!;
      const byOrder = await admin.page(`${lzs}/payments?start=${PREV}&end=${DAY}&order=${one.orderNo}`);
      assert.deepEqual(
        rowsOf(byOrder.text, caption).map((r) => r[0]),
        [one.orderNo],
      );
      const byRef = await admin.page(`${lzs}/payments?start=${PREV}&end=${DAY}&ref=REF-${one.orderNo}`);
      assert.deepEqual(
        rowsOf(byRef.text, caption).map((r) => r[0]),
        [one.orderNo],
      );

      const bad = await admin.fetch(`${lzs}/payments?start=2026-02-30&approved=yes`);
      assert.equal(bad.status, 400);
      const problem = (await bad.json()) as { errors: { pointer: string }[] };
      assert.deepEqual(problem.errors.map((e) => e.pointer).sort(), ['/approved', '/start']);
    },
  );

  await t.test(
    'the CSV and Excel exports hold exactly the filtered rows, formula-like text made safe',
    async () => {
      const query = `start=${PREV}&end=2026-11-21&method=fpx`;
      const page = await admin.page(`${lzs}/payments?${query}`);
      const shown = rowsOf(page.text, `Payments from ${PREV} to 2026-11-21`).map((r) => r[0]);
      const csv = await admin.fetch(`${lzs}/payments/export.csv?${query}`);
      assert.equal(csv.status, 200);
      assert.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
      assert.match(
        csv.headers.get('content-disposition') ?? '',
        /^attachment; filename="payments-LZS-2026-11-19_2026-11-21\.csv"$/,
      );
      const lines = (await csv.text())
        .replace(/^\ufeff/, '')
        .trimEnd()
        .split('\r\n');
      assert.equal(lines[0]?.split(',')[0], '"fpx_seller_order_no"');
      assert.deepEqual(
        lines.slice(1).map((l) => JSON.parse(l.split(',')[0]!) as string),
        shown,
      );
      const risky = lines.find((l) => l.startsWith('"CB-DEAD"'));
      assert.ok(risky?.includes(`"'=HYPERLINK(""http://evil.example/dead"")"`), risky);

      const xlsx = await admin.fetch(`${lzs}/payments/export.xlsx?${query}`);
      assert.equal(xlsx.status, 200);
      const book = await readWorkbook(Buffer.from(await xlsx.arrayBuffer()));
      const rows = book.sheet('Payments');
      assert.equal(rows[0]?.[0], 'fpx_seller_order_no');
      assert.deepEqual(
        rows.slice(1).map((r) => r[0]),
        shown,
      );
      const dead = rows.find((r) => r[0] === 'CB-DEAD')!;
      assert.equal(dead[4], '=HYPERLINK("http://evil.example/dead")');
      assert.equal(dead[6], 28);
      const cell = book.workbook
        .getWorksheet('Payments')!
        .getRow(rows.indexOf(dead) + 1)
        .getCell(5);
      assert.equal(typeof cell.value, 'string', 'text, never a formula');
    },
  );

  await t.test('an order’s page shows its status history and every callback attempt', async () => {
    const page = await admin.page(`${lzs}/payments/${callbacks.retrying}`);
    assert.equal(page.status, 200);
    assert.deepEqual(
      rowsOf(page.text, 'Status history').map((r) => [r[1], r[3]]),
      [
        ['pending', 'checkout'],
        ['success', 'test'],
      ],
    );
    const attempts = rowsOf(page.text, 'Attempts of callback');
    assert.deepEqual(
      attempts.map((r) => [r[0], r[2], r[3]]),
      [['1', '503', '777 ms']],
    );
    has(page.text, /action="\/dashboard\/a\/LZS\/payments\/CB-RETRYING\/redeliver"/);
    // A viewer reads the same page without the form.
    const seen = await viewer.page(`${lzs}/payments/${callbacks.retrying}`);
    assert.equal(seen.status, 200);
    hasNot(seen.text, /redeliver"/);
  });

  await t.test('bank postings filter by exception code, state and type', async () => {
    const page = await admin.page(`${lzs}/postings?start=${DAY}&end=${DAY}&code=FITRAH_MISMATCH`);
    assert.equal(page.status, 200);
    const flagged = generated.items.filter(
      (i) => i.sink === 'LZS' && i.businessDate === DAY && i.channel === 'bank' && i.flagged,
    );
    assert.ok(flagged.length > 0, 'the plan has fitrah mismatches');
    const rows = rowsOf(page.text, `Bank postings from ${DAY} to ${DAY}`);
    assert.deepEqual(rows.map((r) => r[0]).sort(), flagged.map((i) => i.id).sort());
    for (const row of rows) assert.match(row[8] ?? '', /FITRAH_MISMATCH/);
    // The code filter offers the codes those days carry (and "any"), chosen as asked.
    has(page.text, /<option value="FITRAH_MISMATCH" selected>FITRAH_MISMATCH<\/option>/);
    has(page.text, /<option value="any" >Any exception<\/option>/);

    const state = flagged[0]!.state;
    const byState = await admin.page(`${lzs}/postings?start=${DAY}&end=${DAY}&state=${state}`);
    const inState = generated.items.filter(
      (i) => i.sink === 'LZS' && i.businessDate === DAY && i.channel === 'bank' && i.state === state,
    );
    has(byState.text, new RegExp(`Rows 1–${Math.min(50, inState.length)} of ${inState.length}<`));
    const type = await admin.page(`${lzs}/postings?start=${DAY}&end=${DAY}&type=fitrah&code=FITRAH_MISMATCH`);
    assert.equal(rowsOf(type.text, `Bank postings from ${DAY} to ${DAY}`).length, flagged.length);
  });

  await t.test(
    'callbacks list the failing first, each attempt with its time, status and latency',
    async () => {
      const page = await admin.page(`${lzs}/callbacks`);
      const rows = rowsOf(page.text, 'Callbacks, failing first');
      assert.deepEqual(
        rows.map((r) => [r[0], r[2]]),
        [
          ['CB-DEAD', 'dead'],
          ['CB-RETRYING', 'retrying'],
          ['CB-DELIVERED', 'delivered'],
        ],
      );
      assert.match(rows[0]?.[4] ?? '', /: 500, 1234 ms$/);
      const failing = await admin.page(`${lzs}/callbacks?state=failing`);
      assert.deepEqual(
        rowsOf(failing.text, 'Callbacks: Failing').map((r) => r[0]),
        ['CB-DEAD', 'CB-RETRYING'],
      );
      has(page.text, /Failing \(2\)/);
    },
  );

  await t.test('an admin redelivers a callback: a new one is queued and the action is audited', async () => {
    const before = await app.deps.store.callbacks.ofOrder(callbacks.dead);
    const response = await admin.post(`${lzs}/callbacks`, `${lzs}/payments/${callbacks.dead}/redeliver`);
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), `${lzs}/payments/${callbacks.dead}?notice=redelivered`);
    const after = await app.deps.store.callbacks.ofOrder(callbacks.dead);
    assert.equal(after.length, before.length + 1);
    assert.equal(after.at(-1)?.state, 'queued');
    assert.deepEqual(JSON.parse(after.at(-1)!.fields), { orderNo: callbacks.dead });
    const shown = await admin.page(response.headers.get('location')!);
    has(shown.text, /role="status">The callback was queued again/);
    const audit = await app.deps.store.dashboardUsers.audit('LZS', { limit: 10 });
    assert.ok(audit.some((e) => e.action === 'callback.redeliver' && e.target === callbacks.dead));
    // An order with no callback (a pay-link payment) has nothing to send again, and says so.
    const none = lzsOrders[0]!.orderNo;
    const nothing = await admin.post(`${lzs}/callbacks`, `${lzs}/payments/${none}/redeliver`);
    assert.equal(nothing.headers.get('location'), `${lzs}/payments/${none}?notice=no-callback`);
    assert.deepEqual(await app.deps.store.callbacks.ofOrder(none), []);
  });

  await t.test(
    'the reconciliation page lists the runs, what changed, and downloads each workbook',
    async () => {
      const page = await admin.page(`${lzs}/reconciliation`);
      const rows = rowsOf(page.text, 'Reconciliation runs, newest day first');
      assert.deepEqual(
        rows.map((r) => [r[0], r[1], r[2], r[4]]),
        [
          [
            DAY,
            `Run ${rerun.run.id}${rerun.run.changes ? ' (changed)' : ''}`,
            'manual',
            rm(rerun.summary.byStatus.success.sumSen),
          ],
          [DAY, `Run ${nightly.run.id}`, 'nightly', rm(nightly.summary.byStatus.success.sumSen)],
        ],
      );
      const run = await admin.page(`${lzs}/reconciliation/${rerun.run.id}`);
      has(
        run.text,
        new RegExp(`Since <a href="${lzs}/reconciliation/${nightly.run.id}">run ${nightly.run.id}</a>`),
      );
      assert.ok(rerun.run.changes, 'versions received between the two as-of times change the day');
      assert.ok(run.text.includes(rerun.run.changes.split('\n')[0]!.replace(/&/g, '&amp;')));

      const download = await admin.fetch(`${lzs}/reconciliation/${nightly.run.id}/workbook`);
      assert.equal(download.status, 200);
      const bytes = Buffer.from(await download.arrayBuffer());
      assert.equal(createHash('sha256').update(bytes).digest('hex'), nightly.run.fileSha256);
      assert.equal((await readWorkbook(bytes)).sheet('Summary')[2]?.[1], DAY);
    },
  );

  await t.test('an admin re-mails a workbook already sent: the job sends it once more', async () => {
    await drainPipeline(app); // the nightly e-mail goes out (embedded mode: an .eml file)
    const sent = await app.deps.store.reconRuns.deliveries(nightly.run.id);
    assert.deepEqual(
      sent.map((d) => d.outcome),
      ['sent'],
    );
    const response = await admin.post(
      `${lzs}/reconciliation/${nightly.run.id}`,
      `${lzs}/reconciliation/${nightly.run.id}/remail`,
    );
    assert.equal(response.status, 303);
    await drainPipeline(app);
    const deliveries = await app.deps.store.reconRuns.deliveries(nightly.run.id);
    assert.deepEqual(
      deliveries.map((d) => [d.attempt, d.outcome]),
      [
        [1, 'sent'],
        [2, 'sent'],
      ],
    );
    // The job may run twice: the second time it finds an e-mail sent since the request, and sends nothing.
    await reconEmailJob.process({ runId: nightly.run.id, sentBefore: 1 }, app.deps);
    assert.equal((await app.deps.store.reconRuns.deliveries(nightly.run.id)).length, 2);
    const audit = await app.deps.store.dashboardUsers.audit('LZS', { limit: 10 });
    assert.ok(audit.some((e) => e.action === 'reconciliation.remail' && e.target === String(nightly.run.id)));
  });

  await t.test('a viewer gets 403 from each admin form, and sees none', async () => {
    for (const [from, action] of [
      [`${lzs}/callbacks`, `${lzs}/payments/${callbacks.dead}/redeliver`],
      [`${lzs}/reconciliation/${nightly.run.id}`, `${lzs}/reconciliation/${nightly.run.id}/remail`],
    ] as const) {
      const page = await viewer.page(from);
      assert.equal(page.status, 200);
      hasNot(page.text, /method="post" action="\/dashboard\/a\/LZS\//);
      const response = await viewer.post(`${lzs}/`, action);
      assert.equal(response.status, 403, action);
    }
    assert.equal((await app.deps.store.callbacks.ofOrder(callbacks.dead)).length, 2);
  });

  await t.test('another agency’s order, run and workbook are 404, as missing ones are', async () => {
    const ppzOrder = 'PPZ-ORDER-1';
    await app.deps.store.orders.createOrder({
      orderNo: ppzOrder,
      agencyCode: 'PPZ',
      refNo: 'PPZ-REF',
      extraData: null,
      paymentCategory: null,
      amountSen: 1000,
      email: 'p@example.my',
      returnUrl: '',
      formToken: 't',
      at: AS_OF.toISOString(),
    });
    for (const path of [
      `${lzs}/payments/${ppzOrder}`,
      `${lzs}/reconciliation/${ppz.run.id}`,
      `${lzs}/reconciliation/${ppz.run.id}/workbook`,
      `${lzs}/payments/NO-SUCH-ORDER`,
      `${lzs}/reconciliation/999999`,
    ]) {
      const response = await admin.fetch(path);
      assert.equal(response.status, 404, path);
      // The very page a non-member of the agency gets: nothing tells a foreign id from a missing one.
      assert.match(await response.text(), /There is no such page for you here\./);
    }
    assert.equal((await admin.post(`${lzs}/`, `${lzs}/payments/${ppzOrder}/redeliver`)).status, 404);
    assert.equal((await admin.post(`${lzs}/`, `${lzs}/reconciliation/${ppz.run.id}/remail`)).status, 404);
    // The agency's own pages answer; another agency's pages are not there for this user.
    assert.equal((await admin.fetch('/dashboard/a/PPZ/payments')).status, 404);
  });
});

test('a CSV cell that starts like a formula gets an apostrophe; every text cell is quoted', () => {
  assert.equal(csvCell('=1+2'), `"'=1+2"`);
  assert.equal(csvCell('@SUM(A1)'), `"'@SUM(A1)"`);
  assert.equal(csvCell('-5'), `"'-5"`);
  assert.equal(csvCell('a "quoted", value'), '"a ""quoted"", value"');
  assert.equal(csvCell('tab\there'), '"tab␉here"');
  assert.equal(csvCell(12), '12');
  assert.equal(csvCell(null), '');
});

test('the chart describes its figures in words: the total and the best day', () => {
  const day = (d: string, sumSen: number) => ({
    day: d,
    collected: { count: 1, sumSen },
    pending: 0,
    failed: 0,
    exceptions: 0,
  });
  const svg = collectionsChart([
    day('2026-11-19', 1000),
    day('2026-11-20', 250000),
    day('2026-11-21', 0),
  ]).value;
  assert.match(svg, /<title id="chart-title">Collections per day, last 3 days<\/title>/);
  assert.match(
    svg,
    /<desc id="chart-desc">RM 2,510.00 collected from 2026-11-19 to 2026-11-21; the most on 2026-11-20, RM 2,500.00.<\/desc>/,
  );
  assert.match(svg, /<title>2026-11-20: RM 2,500.00<\/title>/);
});
