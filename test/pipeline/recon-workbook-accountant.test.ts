import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixedClock } from '../../core/clock.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { runReconciliation } from '../../pipeline/recon/run-day.ts';
import { bankRecord, startApp, tempDir } from '../helpers.ts';
import { readWorkbook, summaryOf, type Cell } from '../support/workbook.ts';

const DAY = '2026-11-20';
const AS_OF = new Date('2026-11-21T00:30:00+08:00');
const DATE_TIME = 'yyyy-mm-dd hh:mm:ss';

/** LZS's workbook of a day with two bank postings, the first carrying every field of spec 2.5. */
async function workbookOfDay(t: Parameters<typeof startApp>[0]) {
  const clock = fixedClock('2026-11-20T23:00:00+08:00');
  const app = await startApp(t, { LOG_LEVEL: 'warn' }, { clock });
  const full = bankRecord({
    orderno: 'FULL-1',
    name: 'Ahmad bin Ali',
    email: 'ahmad@example.my',
    time: '2026-11-20T09:15:23+08:00',
    data: {
      email: 'Ahmad.Office@Example.my',
      zakat_name: 'Siti binti Ahmad',
      zakat_ic_no: '850312105432',
      zakat_state: 'negeri_sembilan',
      zakat_type: 'zakat_pendapatan',
      zakat_year: '2026',
      zakat_phone: '0123456789',
      zakat_address: 'No 1, Jalan Damai',
      zakat_postcode: '40100',
      zakat_city: 'Shah Alam',
      zakat_amount: '150.50',
    },
  });
  const bare = bankRecord({
    orderno: 'BARE-2',
    amount: 20,
    time: '2026-11-20T10:00:00+08:00',
    data: {},
  });
  assert.equal((await app.postBatch({ transactions: [full, bare] })).status, 200);
  await createInProcessRuntime(app.deps).drain();
  clock.set(AS_OF);
  const { path: file } = await runReconciliation(app.deps, {
    sink: 'LZS',
    day: DAY,
    trigger: 'manual',
    asOf: AS_OF,
    dir: tempDir(t),
  });
  return readWorkbook(file);
}

/** The Transactions sheet's rows as header -> cell, by order number. */
function transactionsByOrder(rows: Cell[][]): Map<string, Record<string, Cell>> {
  const header = rows[0]!.map(String);
  return new Map(
    rows.slice(1).map((r) => [String(r[0]), Object.fromEntries(header.map((h, i) => [h, r[i] ?? null]))]),
  );
}

test('every field of a bank record reaches the Transactions sheet, zakat name, address and data e-mail included', async (t) => {
  const book = await workbookOfDay(t);
  const rows = transactionsByOrder(book.sheet('Transactions'));
  const full = rows.get('FULL-1')!;
  assert.equal(full['Payer name'], 'Ahmad bin Ali');
  assert.equal(full['Email'], 'ahmad@example.my');
  assert.equal(full['Data email'], 'ahmad.office@example.my');
  assert.equal(full['Zakat name'], 'Siti binti Ahmad');
  assert.equal(full['IC no'], '850312105432');
  assert.equal(full['Phone'], '0123456789');
  assert.equal(full['Address'], 'No 1, Jalan Damai');
  assert.equal(full['Postcode'], '40100');
  assert.equal(full['City'], 'Shah Alam');
  assert.equal(full['Year'], '2026');
  assert.equal(full['Amount (RM)'], 150.5);
  assert.equal(full['Zakat amount (RM)'], 150.5);
  // A record without the optional fields leaves their cells empty.
  const bare = rows.get('BARE-2')!;
  for (const header of ['Data email', 'Zakat name', 'Address', 'Postcode', 'City', 'Zakat amount (RM)'])
    assert.equal(bare[header], null, header);
});

test('zakat types and states are shown by name beside their codes, and times are Excel dates in UTC+8', async (t) => {
  const book = await workbookOfDay(t);
  const rows = transactionsByOrder(book.sheet('Transactions'));
  const full = rows.get('FULL-1')!;
  assert.equal(full['Type code'], 'zakat_pendapatan');
  assert.equal(full['Type'], 'Zakat Pendapatan');
  assert.equal(full['State code'], 'negeri_sembilan');
  assert.equal(full['State'], 'Negeri Sembilan');
  assert.equal(rows.get('BARE-2')!['State'], 'Not given');

  // The time is a date cell holding 09:15:23 in Kuala Lumpur, formatted as a date and time.
  const sheet = book.workbook.getWorksheet('Transactions')!;
  const timeColumn = book.sheet('Transactions')[0]!.indexOf('Time (UTC+8)') + 1;
  const cell = sheet.getRow(2).getCell(timeColumn);
  assert.ok(cell.value instanceof Date, `a date, not ${typeof cell.value}`);
  assert.equal(cell.value.toISOString(), '2026-11-20T09:15:23.000Z', 'the wall-clock time in UTC+8');
  assert.equal(cell.numFmt, DATE_TIME);

  const summary = book.workbook.getWorksheet('Summary')!;
  const asOf = summary
    .getColumn(1)
    .values.findIndex((v) => v === 'Figures include data received before (UTC+8)');
  assert.ok(asOf > 0, 'the as-of label in plain words');
  assert.equal((summary.getRow(asOf).getCell(2).value as Date).toISOString(), '2026-11-21T00:30:00.000Z');
  assert.equal(summary.getRow(asOf).getCell(2).numFmt, DATE_TIME);
  const from = summary.getColumn(1).values.findIndex((v) => v === 'Changes counted from (UTC+8)');
  assert.equal((summary.getRow(from).getCell(2).value as Date).toISOString(), '2026-11-20T00:00:00.000Z');

  // The Summary's breakdowns: the name first, the code in a column of its own.
  const s = summaryOf(book.sheet('Summary'));
  const byState = s.table('By state');
  assert.equal(byState.get('Negeri Sembilan')?.at(-1), 'negeri_sembilan');
  assert.equal(byState.get('Not given')?.at(-1), '(none)');
  assert.equal(s.table('By zakat type').get('Zakat Pendapatan')?.at(-1), 'zakat_pendapatan');
});

test('the Summary totals the add charges beside the amounts', async (t) => {
  const book = await workbookOfDay(t);
  const rows = book.sheet('Summary');
  const title = rows.find((r) => r[0] === 'By status')!;
  assert.deepEqual(title.slice(0, 4), ['By status', 'Count', 'Amount (RM)', 'Add charges (RM)']);
  const s = summaryOf(rows);
  // Bank postings carry no add charge: the total is there, and zero.
  assert.deepEqual(s.table('By status').get('total')?.slice(0, 3), [2, 170.5, 0]);
});
