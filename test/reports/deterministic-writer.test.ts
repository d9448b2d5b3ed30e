import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import unzipper from 'unzipper';
import { addTextRow } from '../../reports/reconciliation/cells.ts';
import { DeterministicWorkbookWriter } from '../../reports/reconciliation/deterministic-writer.ts';
import { REPO_ROOT, tempDir } from '../helpers.ts';
import { readWorkbook } from '../support/workbook.ts';

const json = <T>(file: string): T => JSON.parse(readFileSync(path.join(REPO_ROOT, file), 'utf8')) as T;

/** A day's cut-off, days before the wall clock: an entry stamped "now" cannot pass for it. */
const PINNED = new Date('2026-11-20T16:30:00Z');

/** A small workbook written the way the nightly run writes one: a kept first place, the Summary added last. */
async function writeSample(file: string, date: Date): Promise<void> {
  const workbook = new DeterministicWorkbookWriter({ filename: file, date });
  workbook.reserveFirstSheet();
  const rows = workbook.addWorksheet('Transactions');
  addTextRow(rows, ['=HYPERLINK("x")', 'Nur Aisyah', 150.5]).commit();
  rows.commit();
  const summary = workbook.addReservedSheet('Summary', {});
  addTextRow(summary, ['Reconciliation workbook', 'LZS']).commit();
  summary.commit();
  await workbook.commit();
}

test('exceljs is pinned to the exact version installed, because the deterministic writer patches its internals', () => {
  const installed = json<{ version: string }>('node_modules/exceljs/package.json').version;
  const manifest = json<{ dependencies: Record<string, string> }>('package.json');
  const lock = json<{
    packages: Record<string, { version?: string; dependencies?: Record<string, string> }>;
  }>('package-lock.json');
  assert.equal(manifest.dependencies.exceljs, installed, 'package.json names the exact version');
  assert.equal(lock.packages['']?.dependencies?.exceljs, installed, 'package-lock.json names it too');
  assert.equal(lock.packages['node_modules/exceljs']?.version, installed, 'and locks that version');
});

test('every zip entry and the document properties carry the pinned date, never the time of writing', async (t) => {
  const file = path.join(tempDir(t), 'pinned.xlsx');
  await writeSample(file, PINNED);

  // archiver writes an entry's DOS date and time as the UTC reading, in two-second steps (PINNED is on one).
  const directory = await unzipper.Open.file(file);
  assert.ok(directory.files.length >= 8, 'the package parts, the theme and both sheets are in the zip');
  for (const entry of directory.files) {
    assert.equal(
      entry.lastModifiedDateTime.getTime(),
      PINNED.getTime(),
      `${entry.path} is dated the cut-off`,
    );
  }
  const { workbook } = await readWorkbook(file);
  assert.equal(workbook.created.toISOString(), PINNED.toISOString());
  assert.equal(workbook.modified.toISOString(), PINNED.toISOString());
  assert.equal(workbook.creator, 'amil');
  assert.equal(workbook.lastModifiedBy, 'amil');
});

test('the same cells written at different times give the same bytes, with the Summary as the first tab', async (t) => {
  const dir = tempDir(t);
  const first = path.join(dir, 'first.xlsx');
  const second = path.join(dir, 'second.xlsx');
  await writeSample(first, PINNED);
  // Past the zip's two-second date step, so a wall-clock stamp would differ.
  await new Promise((resolve) => setTimeout(resolve, 2100));
  await writeSample(second, PINNED);
  assert.ok(readFileSync(first).equals(readFileSync(second)), 'byte-identical');

  const { names } = await readWorkbook(first);
  assert.deepEqual(names, ['Summary', 'Transactions']);
});

test('text that starts like a formula gets a cell format with quotePrefix, which exceljs itself cannot write', async (t) => {
  const file = path.join(tempDir(t), 'quoted.xlsx');
  await writeSample(file, PINNED);
  const directory = await unzipper.Open.file(file);
  const read = async (name: string) =>
    (await directory.files.find((e) => e.path === name)?.buffer())?.toString('utf8') ?? '';
  const styles = await read('xl/styles.xml');
  const cellXfs = /<cellXfs[^>]*>([\s\S]*?)<\/cellXfs>/.exec(styles)?.[1] ?? '';
  const formats = [...cellXfs.matchAll(/<xf\b[^>]*?(?:\/>|>[\s\S]*?<\/xf>)/g)].map((m) => m[0]);
  const sheet = await read('xl/worksheets/sheet2.xml');
  const styleOf = (ref: string) =>
    Number(new RegExp(`<c r="${ref}"[^>]*\\bs="(\\d+)"`).exec(sheet)?.[1] ?? 0);
  assert.match(formats[styleOf('A1')] ?? '', /\bquotePrefix="1"/, 'the formula-like text is marked as text');
  assert.doesNotMatch(formats[styleOf('B1')] ?? '', /\bquotePrefix/, 'plain text is not');
});
