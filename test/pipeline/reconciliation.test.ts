import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fixedClock } from '../../core/clock.ts';
import { TEST_SINK } from '../../core/store/index.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { runReconciliation } from '../../pipeline/recon/run-day.ts';
import { SHEETS } from '../../reports/reconciliation/workbook.ts';
import { compareWorkbooks } from '../../reports/reconciliation/compare.ts';
import { startApp, tempDir } from '../helpers.ts';
import { AS_OF, DAY, generateDay, truthOf, type Total } from '../support/recon-day.ts';
import { loadDay } from '../support/recon-load.ts';
import { readWorkbook, sen, summaryOf, type Cell } from '../support/workbook.ts';

const CHANNEL: Record<string, string> = {
  bank: 'Bank posting',
  fpx: 'Checkout FPX',
  card: 'Checkout card',
  ewallet: 'Checkout e-wallet',
};

const pair = (total: Total): [number, number] => [total.count, total.sumSen];
const cells = (row: Cell[] | undefined, from: number): [number, number] => [
  Number(row?.[from]),
  sen(row?.[from + 1]),
];

test('every control total of every workbook equals the generated truth to the sen', async (t) => {
  const generated = generateDay(3000);
  const app = await loadDay(t, generated);
  const dir = tempDir(t);

  for (const sink of ['LZS', 'PPZ', TEST_SINK]) {
    const truth = truthOf(generated, sink);
    const { path: file, summary } = await runReconciliation(app.deps, {
      sink,
      day: DAY,
      trigger: 'manual',
      asOf: AS_OF,
      dir,
    });
    const book = await readWorkbook(file);
    assert.deepEqual(book.names, [...SHEETS], sink);
    const s = summaryOf(book.sheet('Summary'));

    for (const status of ['success', 'pending', 'failed'] as const) {
      assert.deepEqual(
        cells(s.table('By status').get(status), 0),
        pair(truth.byStatus[status]),
        `${sink} ${status}`,
      );
    }
    // Zakat types and states are shown by name; their code is the table's last column.
    const byCode = (title: string) =>
      new Map([...s.table(title).values()].map((row) => [String(row.at(-1)), row]));
    const tableOf = (title: string, truthMap: Record<string, Total>, label = (k: string) => k) => {
      const table = title === 'By channel' ? s.table(title) : byCode(title);
      assert.deepEqual(
        [...table.keys()].sort(),
        Object.keys(truthMap).map(label).sort(),
        `${sink} ${title} keys`,
      );
      for (const [key, total] of Object.entries(truthMap))
        assert.deepEqual(cells(table.get(label(key)), 0), pair(total), `${sink} ${title} ${key}`);
    };
    tableOf('By zakat type', truth.byType);
    tableOf('By state', truth.byState);
    tableOf('By channel', truth.byChannel, (k) => CHANNEL[k]!);

    const roll = s.table('Pending roll');
    assert.deepEqual(
      cells(roll.get('Opening (pending at the start of the day)'), 0),
      pair(truth.opening),
      `${sink} opening`,
    );
    assert.deepEqual(
      cells(roll.get('Closing (pending at as-of)'), 0),
      pair(truth.closing),
      `${sink} closing`,
    );
    // Opening + movements = closing, in the sheet's own figures.
    const moves = [
      '+ became pending',
      '- pending that succeeded',
      '- pending that failed',
      '+/- amount changes of pending items',
    ];
    const [added, succeeded, failed, changed] = moves.map((label) => cells(roll.get(label), 0));
    assert.equal(
      truth.opening.count + added![0] - succeeded![0] - failed![0],
      truth.closing.count,
      `${sink} roll count`,
    );
    assert.equal(
      truth.opening.sumSen + added![1] - succeeded![1] - failed![1] + changed![1],
      truth.closing.sumSen,
      `${sink} roll sum`,
    );
    // Every version received counts: a posting that went pending -> success within the day is in both.
    assert.deepEqual(added, pair(truth.added), `${sink} became pending`);
    assert.deepEqual(succeeded, pair(truth.succeeded), `${sink} pending that succeeded`);
    assert.deepEqual(failed, pair(truth.failed), `${sink} pending that failed`);
    assert.equal(
      s.value('Changes received during the day')[0],
      truth.changesReceived,
      `${sink} changes received`,
    );
    assert.equal(roll.get('Check: opening + movements = closing')?.[0], 'balances', sink);
    assert.equal(summary.pending.balances, true);

    const adjustments = s.table('Adjustments to earlier days');
    assert.deepEqual(cells(adjustments.get('Status changes and late arrivals'), 0), [
      truth.adjustments.count,
      truth.adjustments.collectedDeltaSen,
    ]);
    assert.equal(s.value('Transactions of the day')[0], truth.transactions, `${sink} transactions`);
    assert.equal(s.value('Flagged transactions')[0], truth.flagged, `${sink} flagged`);
    assert.equal(s.value('Anomalies received')[0], truth.anomalies, `${sink} anomalies`);

    // The sheets hold the rows the totals count.
    const transactions = book.sheet('Transactions');
    assert.equal(transactions.length - 1, truth.transactions, `${sink} transaction rows`);
    const amountColumn = transactions[0]!.indexOf('Amount (RM)');
    const statusColumn = transactions[0]!.indexOf('Status');
    const collected = transactions
      .slice(1)
      .filter((r) => r[statusColumn] === 'success')
      .reduce((sum, r) => sum + sen(r[amountColumn]), 0);
    assert.equal(collected, truth.byStatus.success.sumSen, `${sink} collected rows`);
    assert.equal(book.sheet('Pending').length - 1, truth.closing.count, `${sink} pending rows`);
    assert.equal(book.sheet('Adjustments').length - 1, truth.adjustments.count, `${sink} adjustment rows`);
    assert.equal(
      book.sheet('Exceptions').length - 1,
      truth.flagged + truth.anomalies,
      `${sink} exception rows`,
    );
    assert.ok(truth.transactions > 0, `${sink} has transactions`);
  }
  // The plan really exercises what it is meant to.
  const lzs = truthOf(generated, 'LZS');
  assert.ok(lzs.opening.count > 0 && lzs.adjustments.count > 0 && lzs.flagged > 0 && lzs.anomalies === 1);
  assert.ok((lzs.byChannel.card?.count ?? 0) > 0 && lzs.byStatus.pending.count > 0);
  // Postings of the day that went pending -> success, and pending -> failed, within it.
  const withinDay = (to: string) =>
    generated.items.some(
      (i) =>
        i.sink === 'LZS' &&
        i.businessDate === DAY &&
        i.versions.length === 2 &&
        i.versions[0]!.status === 'pending' &&
        i.versions[0]!.at >= Date.parse(`${DAY}T00:00:00+08:00`) &&
        i.versions[1]!.status === to &&
        i.versions[1]!.at < AS_OF.getTime(),
    );
  assert.ok(withinDay('success') && withinDay('failed'), 'movements within the day');
});

test('live-test entries never appear in an agency workbook; they have their own bank test report', async (t) => {
  const generated = generateDay(300);
  const app = await loadDay(t, generated);
  const dir = tempDir(t);
  const testOrders = new Set(generated.items.filter((i) => i.sink === TEST_SINK).map((i) => i.id));
  for (const sink of ['LZS', 'PPZ']) {
    const { path: file } = await runReconciliation(app.deps, {
      sink,
      day: DAY,
      trigger: 'manual',
      asOf: AS_OF,
      dir,
    });
    const rows = (await readWorkbook(file)).sheet('Transactions').slice(1);
    assert.ok(rows.length > 0);
    assert.equal(rows.filter((r) => testOrders.has(String(r[0]))).length, 0, sink);
  }
  const { path: file } = await runReconciliation(app.deps, {
    sink: TEST_SINK,
    day: DAY,
    trigger: 'manual',
    asOf: AS_OF,
    dir,
  });
  assert.match(path.basename(file), /^BANK-TEST-2026-11-20-asof-/);
  const book = await readWorkbook(file);
  assert.equal(book.sheet('Summary')[0]![0], 'Bank live-test report');
  const rows = book.sheet('Transactions').slice(1);
  assert.ok(rows.length > 0 && rows.every((r) => testOrders.has(String(r[0]))));
});

test('the same day read as of the same time gives byte-identical workbooks; a re-run reports what changed', async (t) => {
  const generated = generateDay(400);
  const app = await loadDay(t, generated);
  const first = await runReconciliation(app.deps, {
    sink: 'PPZ',
    day: DAY,
    trigger: 'manual',
    asOf: AS_OF,
    dir: tempDir(t),
  });
  const second = await runReconciliation(app.deps, {
    sink: 'PPZ',
    day: DAY,
    trigger: 'manual',
    asOf: AS_OF,
    dir: tempDir(t),
  });
  assert.ok(readFileSync(first.path).equals(readFileSync(second.path)));
  assert.equal(second.run.fileSha256, first.run.fileSha256);
  assert.equal(second.run.previousRun, first.run.id);
  assert.match(second.run.changes ?? '', /same records and totals as run/);

  // A late update arrives; the re-run as of later says which cells changed.
  const pending = generated.items.find(
    (i) =>
      i.sink === 'PPZ' &&
      i.channel === 'bank' &&
      i.businessDate === DAY &&
      i.versions.at(-1)!.status === 'pending' &&
      i.versions.at(-1)!.at < AS_OF.getTime(),
  );
  assert.ok(pending, 'the plan has a pending PPZ posting');
  const batch = generated.batches
    .flatMap((b) => b.records)
    .filter((r) => r.orderno === pending.id)
    .at(-1)!;
  const later = new Date(AS_OF.getTime() + 3_600_000);
  (app.deps.clock as ReturnType<typeof fixedClock>).set(later);
  const response = await app.postBatch({ transactions: [{ ...batch, status: 'success' }] });
  assert.equal(response.status, 200);
  const relay = createInProcessRuntime(app.deps, { pollMs: 20, maxAttempts: 3, backoffMs: 10 });
  await relay.drain();
  await relay.stop();
  const third = await runReconciliation(app.deps, {
    sink: 'PPZ',
    day: DAY,
    trigger: 'manual',
    asOf: later,
    dir: tempDir(t),
  });
  assert.notEqual(third.run.fingerprint, second.run.fingerprint);
  assert.match(third.run.changes ?? '', /^differs from run \d+: \d+ cell\(s\)/);
  assert.match(third.run.changes ?? '', /Summary!B5: "2026-11-21 00:30:00" -> "2026-11-21 01:30:00"/);
  const diff = await compareWorkbooks(second.path, third.path, 10_000);
  // Reading back is reliable (exceljs's streaming reader was not: exceljs#3064): the same answer every time.
  for (let again = 0; again < 20; again += 1)
    assert.deepEqual(await compareWorkbooks(second.path, third.path, 10_000), diff);
  const headers = (await readWorkbook(third.path)).sheet('Transactions')[0]!;
  const statusColumn = String.fromCharCode(65 + headers.indexOf('Status')); // within A..Z
  assert.ok(
    diff.lines.some((line) =>
      new RegExp(`^Transactions!${statusColumn}\\d+: "pending" -> "success"$`).test(line),
    ),
    diff.lines.join('\n'),
  );
  assert.equal(diff.count, Number(/^differs from run \d+: (\d+) cell/.exec(third.run.changes ?? '')?.[1]));
});

test('a day with no postings still produces a workbook that says so', async (t) => {
  const app = await startApp(t, { LOG_LEVEL: 'warn' });
  const { path: file, summary } = await runReconciliation(app.deps, {
    sink: 'LZS',
    day: '2026-11-01',
    trigger: 'manual',
    asOf: new Date('2026-11-02T00:30:00+08:00'),
    dir: tempDir(t),
  });
  assert.equal(summary.inputs.transactions, 0);
  const book = await readWorkbook(file);
  const rows = book.sheet('Summary');
  assert.ok(rows.some((r) => r[0] === 'No postings or payments on this day.'));
  assert.deepEqual(cells(summaryOf(rows).table('By status').get('success'), 0), [0, 0]);
  assert.equal(book.sheet('Transactions').length, 1, 'only the header');
});

test('a workbook is not built while the pipeline has not ledgered what was received', async (t) => {
  const clock = fixedClock('2026-11-20T10:00:00+08:00');
  const app = await startApp(t, { LOG_LEVEL: 'warn' }, { clock });
  const generated = generateDay(50);
  const response = await app.postBatch({
    transactions: generated.batches.find((b) => b.at.getTime() >= Date.parse('2026-11-20T00:00:00+08:00'))!
      .records,
  });
  assert.equal(response.status, 200);
  clock.set(AS_OF);
  await assert.rejects(
    runReconciliation(app.deps, { sink: 'LZS', day: DAY, trigger: 'manual', asOf: AS_OF, dir: tempDir(t) }),
    { name: 'NotReadyError', message: /has not caught up with 2026-11-20/ },
  );
  assert.equal((await app.deps.store.reconRuns.list({ limit: 10 })).length, 0, 'no run is recorded');
});
