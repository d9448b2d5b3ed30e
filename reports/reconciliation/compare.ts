import { readFileSync } from 'node:fs';
import ExcelJS from 'exceljs';
import { SHEETS } from './workbook.ts';

export interface WorkbookDiff {
  identical: boolean;
  /** How many cells differ (rows present in only one file count each of their cells). */
  count: number;
  /** The first `limit` differences, e.g. `Transactions!L7: 150 -> 150.5`. */
  lines: string[];
}

type Cell = string | number | boolean | null;
type Rows = AsyncIterator<{ number: number; cells: Cell[] }>;

/**
 * Compares two reconciliation workbooks cell by cell, streaming both (a day may have a million rows).
 * Byte-identical files are identical without being read.
 */
export async function compareWorkbooks(left: string, right: string, limit = 50): Promise<WorkbookDiff> {
  if (readFileSync(left).equals(readFileSync(right))) return { identical: true, count: 0, lines: [] };
  const diff: WorkbookDiff = { identical: true, count: 0, lines: [] };
  const note = (line: string) => {
    diff.identical = false;
    diff.count += 1;
    if (diff.lines.length < limit) diff.lines.push(line);
  };
  const a = sheets(left);
  const b = sheets(right);
  for (let index = 0; ; index += 1) {
    const [sa, sb] = await Promise.all([a.next(), b.next()]);
    if (sa.done && sb.done) break;
    const name = SHEETS[index] ?? `sheet ${index + 1}`;
    if (sa.done || sb.done) {
      note(`${name}: only in ${sa.done ? 'the second' : 'the first'} workbook`);
      continue;
    }
    await compareRows(name, sa.value, sb.value, note);
  }
  // Sheets are read in order; drain anything left so the files are closed.
  return diff;
}

async function compareRows(name: string, a: Rows, b: Rows, note: (line: string) => void): Promise<void> {
  let ra = await a.next();
  let rb = await b.next();
  while (!ra.done || !rb.done) {
    const na = ra.done ? Infinity : ra.value.number;
    const nb = rb.done ? Infinity : rb.value.number;
    const rowNo = Math.min(na, nb);
    const ca = na === rowNo && !ra.done ? ra.value.cells : [];
    const cb = nb === rowNo && !rb.done ? rb.value.cells : [];
    for (let col = 0; col < Math.max(ca.length, cb.length); col += 1) {
      const va = ca[col] ?? null;
      const vb = cb[col] ?? null;
      if (va !== vb) note(`${name}!${columnName(col)}${rowNo}: ${show(va)} -> ${show(vb)}`);
    }
    if (na === rowNo) ra = await a.next();
    if (nb === rowNo) rb = await b.next();
  }
}

async function* sheets(file: string): AsyncGenerator<Rows> {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(file, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    styles: 'ignore',
    hyperlinks: 'ignore',
  });
  for await (const sheet of reader) {
    yield (async function* () {
      for await (const row of sheet) {
        const values = (row.values as unknown[]).slice(1).map(plain);
        yield { number: row.number, cells: values };
      }
    })();
  }
}

function plain(value: unknown): Cell {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return JSON.stringify(value);
}

const show = (value: Cell): string => (value === null ? '(empty)' : JSON.stringify(value));

function columnName(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26))
    name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}
