import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import unzipper from 'unzipper';
import { fixedClock } from '../../core/clock.ts';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { runReconciliation } from '../../pipeline/recon/run-day.ts';
import { EXCEPTION_CODES } from '../../pipeline/normalise/rules.ts';
import { addTextRow } from '../../reports/reconciliation/cells.ts';
import { compareWorkbooks } from '../../reports/reconciliation/compare.ts';
import { DeterministicWorkbookWriter } from '../../reports/reconciliation/deterministic-writer.ts';
import { writeReconWorkbook } from '../../reports/reconciliation/workbook.ts';
import { bankRecord, startApp, tempDir, type TestApp } from '../helpers.ts';
import { readWorkbook, summaryOf } from '../support/workbook.ts';

const DAY = '2026-11-20';
const AS_OF = new Date('2026-11-21T00:30:00+08:00');

/** An app whose bank postings of DAY (one per name, a minute apart) are normalised and ledgered. */
async function dayWith(t: Parameters<typeof startApp>[0], names: string[]): Promise<TestApp> {
  const clock = fixedClock('2026-11-20T23:00:00+08:00');
  const app = await startApp(t, { LOG_LEVEL: 'warn' }, { clock });
  const records = names.map((name, i) =>
    bankRecord({
      orderno: `CELL-${String(i).padStart(3, '0')}`,
      name,
      time: `2026-11-20T09:${String(i).padStart(2, '0')}:00+08:00`,
    }),
  );
  assert.equal((await app.postBatch({ transactions: records })).status, 200);
  await createInProcessRuntime(app.deps).drain();
  clock.set(AS_OF);
  return app;
}

/** The XML of every part of an xlsx file, by path. */
async function parts(file: string): Promise<Map<string, string>> {
  const directory = await unzipper.Open.file(file);
  const map = new Map<string, string>();
  for (const entry of directory.files) map.set(entry.path, (await entry.buffer()).toString('utf8'));
  return map;
}

/** Indices (the cells' `s`) of the cell formats that carry quotePrefix="1". */
function quotedStyles(stylesXml: string): Set<string> {
  const cellXfs = /<cellXfs[^>]*>([\s\S]*?)<\/cellXfs>/.exec(stylesXml)?.[1] ?? '';
  const xfs = [...cellXfs.matchAll(/<xf\b[^>]*?(?:\/>|>[\s\S]*?<\/xf>)/g)].map((m) => m[0]);
  return new Set(xfs.flatMap((xf, i) => (/\bquotePrefix="1"/.test(xf) ? [String(i)] : [])));
}

/** The style index of the string cell (exceljs writes `t="str"` with a `<v>`) whose text is `text`. */
function styleOfText(sheetXml: string, text: string): string | undefined {
  for (const m of sheetXml.matchAll(/<c\b([^>]*)>([\s\S]*?)<\/c>/g)) {
    const content = /<(?:v|t)[^>]*>([\s\S]*?)<\/(?:v|t)>/.exec(m[2] ?? '')?.[1];
    if (content === text) return /\bs="(\d+)"/.exec(m[1] ?? '')?.[1] ?? '0';
  }
  return undefined;
}

const xmlText = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

test('payer names that start like a formula are written as text with quotePrefix, never as formulas', async (t) => {
  const risky = ['=HYPERLINK("http://evil.example","click")', '+60123456789', '-2+3', '@SUM(A1:A9)'];
  const app = await dayWith(t, [...risky, 'Nur Aisyah binti Ahmad']);
  const { path: file } = await runReconciliation(app.deps, {
    sink: 'LZS',
    day: DAY,
    trigger: 'manual',
    asOf: AS_OF,
    dir: tempDir(t),
  });
  const book = await readWorkbook(file);
  const names = book
    .sheet('Transactions')
    .slice(1)
    .map((row) => row[3]);
  assert.deepEqual(names, [...risky, 'Nur Aisyah binti Ahmad'], 'the text is kept as sent, as strings');

  const xml = await parts(file);
  const quoted = quotedStyles(xml.get('xl/styles.xml') ?? '');
  assert.ok(quoted.size > 0, 'a cell format with quotePrefix exists');
  const sheet = xml.get('xl/worksheets/sheet2.xml') ?? '';
  for (const name of risky) assert.ok(quoted.has(styleOfText(sheet, xmlText(name)) ?? 'none'), name);
  assert.equal(quoted.has(styleOfText(sheet, 'Nur Aisyah binti Ahmad') ?? 'none'), false, 'plain text');
  for (const [part, content] of xml) assert.doesNotMatch(content, /<f[ >]/, `no formula in ${part}`);
});

test('text cells starting with tab or CR get quotePrefix too, and numbers do not', async (t) => {
  const file = path.join(tempDir(t), 'cells.xlsx');
  const workbook = new DeterministicWorkbookWriter({ filename: file, date: AS_OF });
  const sheet = workbook.addWorksheet('Cells');
  addTextRow(sheet, ['\t=1+1', '\r=2+2', '=3', 'plain', -5]).commit();
  sheet.commit();
  await workbook.commit();
  const xml = await parts(file);
  const quoted = quotedStyles(xml.get('xl/styles.xml') ?? '');
  const cells = [...(xml.get('xl/worksheets/sheet1.xml') ?? '').matchAll(/<c\b([^>]*)>/g)].map(
    (m) => /\bs="(\d+)"/.exec(m[1] ?? '')?.[1] ?? '0',
  );
  assert.deepEqual(
    cells.map((s) => quoted.has(s)),
    [true, true, true, false, false],
  );
});

test('a control character in a payer name is flagged on the Exceptions sheet and shown as a visible symbol', async (t) => {
  const app = await dayWith(t, ['Ali\u0007bin\u0000Abu', 'Siti Aminah']);
  const { path: file, summary } = await runReconciliation(app.deps, {
    sink: 'LZS',
    day: DAY,
    trigger: 'manual',
    asOf: AS_OF,
    dir: tempDir(t),
  });
  assert.equal(summary.inputs.flagged, 1);
  const book = await readWorkbook(file);
  const [header, first, second] = book.sheet('Transactions');
  assert.equal(first?.[3], 'Ali\u2407bin\u2400Abu', 'BEL and NUL shown as control pictures, not dropped');
  assert.equal(first?.[header!.indexOf('Exception codes')], 'CONTROL_CHARACTER');
  assert.equal(second?.[3], 'Siti Aminah');
  const exceptions = book.sheet('Exceptions').slice(1);
  assert.deepEqual(
    exceptions.map((row) => [row[0], row[5], row[6]]),
    [['CELL-000', 'CONTROL_CHARACTER', EXCEPTION_CODES.CONTROL_CHARACTER]],
  );
  assert.equal(summaryOf(book.sheet('Summary')).value('Flagged transactions')[0], 1);
});

test('a Transactions sheet past the row limit continues on Transactions (2), (3), each with its header', async (t) => {
  const names = ['A one', 'B two', 'C three', 'D four', 'E five'];
  const app = await dayWith(t, names);
  const write = async (file: string, maxSheetRows: number) => {
    const snapshot = await app.deps.store.reconSnapshot.open('LZS', DAY, AS_OF);
    try {
      await writeReconWorkbook({ snapshot, title: 'LZS', explanations: EXCEPTION_CODES, file, maxSheetRows });
    } finally {
      await snapshot.close();
    }
  };
  const file = path.join(tempDir(t), 'split.xlsx');
  await write(file, 3);
  const book = await readWorkbook(file);
  assert.deepEqual(book.names, [
    'Summary',
    'Transactions',
    'Transactions (2)',
    'Transactions (3)',
    'Exceptions',
    'Pending',
    'Adjustments',
  ]);
  const parts = ['Transactions', 'Transactions (2)', 'Transactions (3)'].map((name) => book.sheet(name));
  assert.deepEqual(
    parts.map((rows) => rows.length),
    [3, 3, 2],
    'no sheet passes the limit, header included',
  );
  for (const rows of parts) assert.equal(rows[0]?.[0], 'Order no');
  assert.deepEqual(
    parts.flatMap((rows) => rows.slice(1).map((row) => row[3])),
    names,
    'every row once, in order',
  );
});

test('comparing workbooks names a continuation sheet by its own name', async (t) => {
  const app = await dayWith(t, ['A one', 'B two', 'C three', 'D four', 'E five']);
  const dir = tempDir(t);
  for (const [file, maxSheetRows] of [
    ['three.xlsx', 3],
    ['four.xlsx', 4],
  ] as const) {
    const snapshot = await app.deps.store.reconSnapshot.open('LZS', DAY, AS_OF);
    try {
      await writeReconWorkbook({
        snapshot,
        title: 'LZS',
        explanations: EXCEPTION_CODES,
        file: path.join(dir, file),
        maxSheetRows,
      });
    } finally {
      await snapshot.close();
    }
  }
  const diff = await compareWorkbooks(path.join(dir, 'three.xlsx'), path.join(dir, 'four.xlsx'), 500);
  assert.equal(diff.identical, false);
  assert.ok(diff.lines.includes('Transactions!A4: (empty) -> "CELL-002"'), diff.lines.join('\n'));
  assert.ok(diff.lines.includes('sheet 4: Transactions (3) -> Exceptions'), diff.lines.join('\n'));
  assert.ok(
    diff.lines.some((line) => line.startsWith('Transactions (2)!')),
    diff.lines.join('\n'),
  );
});
