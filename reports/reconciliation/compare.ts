import { statSync } from 'node:fs';
import { sha256File } from '../../core/canonical-json.ts';
import { createRequire } from 'node:module';
import type * as Unzipper from 'unzipper';

type SheetRows = AsyncIterable<{ number: number; values: unknown[] }>;
type WorksheetReaderClass = new (options: {
  workbook: unknown;
  id: number;
  iterator: AsyncIterable<unknown>;
  options: Record<string, string>;
}) => SheetRows;
type StylesXformClass = new () => {
  parseStream(stream: NodeJS.ReadableStream): Promise<unknown>;
  getStyleModel(id: number): unknown;
};

interface Readers {
  unzipper: typeof Unzipper.default;
  /** exceljs's row-by-row sheet parser (not in its public exports, so loaded by path; exceljs is pinned). */
  WorksheetReader: WorksheetReaderClass;
  /** exceljs's cell-format parser: with it, the sheet parser reads a date-formatted number as a Date. */
  StylesXform: StylesXformClass;
}
let loaded: Readers | undefined;

/**
 * The readers, loaded with the first comparison: the pipeline's processes import this module (a re-run's
 * correction compares), and unzipper with exceljs's parsers cost about 0.4 s of CPU to load (decision 257).
 */
function readers(): Readers {
  if (loaded) return loaded;
  const load = createRequire(import.meta.url);
  loaded = {
    unzipper: load('unzipper') as Readers['unzipper'],
    WorksheetReader: load('exceljs/lib/stream/xlsx/worksheet-reader.js') as WorksheetReaderClass,
    StylesXform: load('exceljs/lib/xlsx/xform/style/styles-xform.js') as StylesXformClass,
  };
  return loaded;
}

export interface WorkbookDiff {
  identical: boolean;
  /** How many cells differ (rows present in only one file count each of their cells). */
  count: number;
  /** The first `limit` differences, e.g. `Transactions!L7: 150 -> 150.5`. */
  lines: string[];
}

type Cell = string | number | boolean | null;
type Rows = AsyncIterator<{ number: number; cells: Cell[] }>;
type Sheet = { name: string; rows: Rows };

/**
 * Compares two reconciliation workbooks cell by cell, streaming both (a day may have a million rows).
 * Byte-identical files are identical without being read.
 */
export async function compareWorkbooks(left: string, right: string, limit = 50): Promise<WorkbookDiff> {
  if (statSync(left).size === statSync(right).size && (await sha256File(left)) === (await sha256File(right)))
    return { identical: true, count: 0, lines: [] };
  return compareOnce(left, right, limit);
}

async function compareOnce(left: string, right: string, limit: number): Promise<WorkbookDiff> {
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
    const first = sa.done ? undefined : sa.value;
    const second = sb.done ? undefined : sb.value;
    if (!first && !second) break;
    if (!first || !second) {
      const only = (first ?? second) as Sheet;
      note(`${only.name}: only in ${first ? 'the first' : 'the second'} workbook`);
      // Read to its end all the same: an unread sheet's stream would open the file after we returned.
      while (!(await only.rows.next()).done);
      continue;
    }
    if (first.name !== second.name) note(`sheet ${index + 1}: ${first.name} -> ${second.name}`);
    await compareRows(first.name, first.rows, second.rows, note);
  }
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

/**
 * The sheets of one of our workbooks, in order, each as its rows, streamed.
 *
 * Not through exceljs's streaming WorkbookReader: its single-pass unzip sometimes loses the zip's last
 * entry (xl/workbook.xml, which exceljs's writer puts last) and then fails or misreads
 * (exceljs/exceljs#3064, about 1 read in 40 here). The zip's central directory (unzipper.Open) gives every
 * entry reliably; each sheet's XML goes through exceljs's own WorksheetReader, row by row. Our workbooks use
 * no shared strings and their sheets are numbered in tab order (a table past Excel's row limit continues on
 * `Transactions (2)` ..., so the names come from xl/workbook.xml); styles are not compared (values are),
 * but they are read so that a date cell compares as its date and time (`2026-11-21 00:30:00`), not as
 * Excel's day number.
 */
async function* sheets(file: string): AsyncGenerator<Sheet, void> {
  const { unzipper, WorksheetReader, StylesXform } = readers();
  const directory = await unzipper.Open.file(file);
  const names = sheetNames(
    (await directory.files.find((entry) => entry.path === 'xl/workbook.xml')?.buffer())?.toString('utf8') ??
      '',
  );
  const number = (p: string) => Number(/^xl\/worksheets\/sheet(\d+)\.xml$/.exec(p)?.[1] ?? NaN);
  const entries = directory.files
    .filter((entry) => !Number.isNaN(number(entry.path)))
    .sort((a, b) => number(a.path) - number(b.path));
  const styles = new StylesXform();
  const stylesEntry = directory.files.find((entry) => entry.path === 'xl/styles.xml');
  if (stylesEntry) await styles.parseStream(stylesEntry.stream());
  const workbook = { sharedStrings: [], styles, properties: {} };
  for (const entry of entries) {
    const reader = new WorksheetReader({
      workbook,
      id: number(entry.path),
      iterator: entry.stream(),
      options: { worksheets: 'emit', hyperlinks: 'ignore' },
    });
    const id = number(entry.path);
    yield {
      name: names.get(id) ?? `sheet ${id}`,
      rows: (async function* () {
        for await (const row of reader) yield { number: row.number, cells: row.values.slice(1).map(plain) };
      })(),
    };
  }
}

/** Sheet id -> name, from the workbook part (exceljs writes sheet N as xl/worksheets/sheetN.xml). */
function sheetNames(workbookXml: string): Map<number, string> {
  const names = new Map<number, string>();
  for (const [tag] of workbookXml.matchAll(/<sheet\b[^>]*>/g)) {
    const id = Number(/\bsheetId="(\d+)"/.exec(tag)?.[1]);
    const name = /\bname="([^"]*)"/.exec(tag)?.[1];
    if (name !== undefined) names.set(id, unescapeXml(name));
  }
  return names;
}

const unescapeXml = (text: string): string =>
  text.replace(
    /&(lt|gt|quot|apos|amp);/g,
    (_, e: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e] ?? '',
  );

function plain(value: unknown): Cell {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  // Our date cells hold a UTC+8 wall-clock time: shown as written, to the second.
  if (value instanceof Date) return value.toISOString().slice(0, 19).replace('T', ' ');
  return JSON.stringify(value);
}

const show = (value: Cell): string => (value === null ? '(empty)' : JSON.stringify(value));

function columnName(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26))
    name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}
