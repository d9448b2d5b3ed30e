import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { setTimeout } from 'node:timers/promises';
import type ExcelJS from 'exceljs';
import type { ReconSnapshot } from '../../core/store/index.ts';
import { addTextRow, EXCEL_MAX_ROWS } from './cells.ts';
import type { DeterministicWorkbookWriter } from './deterministic-writer.ts';
import { summaryBuilder, type DaySummary } from './summary.ts';
import {
  ADJUSTMENT_COLUMNS,
  EXCEPTION_COLUMNS,
  exceptionLines,
  MONEY,
  pendingColumns,
  TRANSACTION_COLUMNS,
  type Column,
} from './workbook-columns.ts';
import { writeSummary } from './workbook-summary.ts';

export interface WorkbookInput {
  snapshot: ReconSnapshot;
  /** The agency's name (or the bank test report's title). */
  title: string;
  /** Plain-language explanation of each exception code. */
  explanations: Readonly<Record<string, string>>;
  file: string;
  /** Rows per sheet, the header included, before a table continues on `<name> (2)`; Excel's limit by default. */
  maxSheetRows?: number;
}

export const SHEETS = ['Summary', 'Transactions', 'Exceptions', 'Pending', 'Adjustments'] as const;

/**
 * Writes one sink's reconciliation workbook for one day with exceljs's streaming writer, so a day of a
 * million rows never sits in memory, and returns its summary. The day's transactions are read once: the
 * summary is counted as their rows are written, and the Summary sheet (the first tab) is written last.
 * Same snapshot, same bytes (see DeterministicWorkbookWriter).
 */
export async function writeReconWorkbook(input: WorkbookInput): Promise<DaySummary> {
  const { snapshot } = input;
  // exceljs loads with the first workbook, not with every process that could write one (decision 257).
  const { DeterministicWorkbookWriter } = await import('./deterministic-writer.ts');
  const workbook = new DeterministicWorkbookWriter({ filename: input.file, date: new Date(snapshot.asOf) });
  workbook.reserveFirstSheet();

  const maxRows = input.maxSheetRows ?? EXCEL_MAX_ROWS;
  const builder = summaryBuilder(snapshot);
  const transactionSheets = await table(
    workbook,
    'Transactions',
    TRANSACTION_COLUMNS,
    counted(snapshot.transactions(), (item) => builder.transaction(item)),
    maxRows,
  );
  const summary = await builder.finish();

  const flagged = snapshot.transactions({ flaggedOnly: true });
  await table(
    workbook,
    'Exceptions',
    EXCEPTION_COLUMNS,
    exceptionLines(flagged, snapshot, input.explanations),
    maxRows,
  );

  const asOf = new Date(summary.asOf).getTime();
  await table(workbook, 'Pending', pendingColumns(asOf), snapshot.pending('closing'), maxRows);

  await table(
    workbook,
    'Adjustments',
    ADJUSTMENT_COLUMNS,
    snapshot.movements({ adjustmentsOnly: true }),
    maxRows,
  );

  writeSummary(workbook, summary, input.title, transactionSheets);
  await workbook.commit();
  return summary;
}

/** The items as they are, each handed to `see` as it is read (the summary counts the rows being written). */
async function* counted<T>(items: AsyncIterable<T>, see: (item: T) => void): AsyncGenerator<T> {
  for await (const item of items) {
    see(item);
    yield item;
  }
}

const BUFFERED_BYTES = 4 * 1024 * 1024;

/**
 * exceljs writes rows into the zip without backpressure: a sheet's XML piles up in the zip entry's buffer
 * (1.5 GB for a million rows) unless the writer waits. Wait while more than 4 MB are buffered, for at most
 * a second at a time (the zip always catches up; the bound only guards against a stalled stream).
 */
async function drained(sheet: ExcelJS.Worksheet): Promise<void> {
  const sink = (sheet as unknown as { stream?: { pipes?: Writable[] } }).stream?.pipes?.[0];
  if (!sink || sink.writableLength <= BUFFERED_BYTES) {
    await new Promise((resolve) => setImmediate(resolve));
    return;
  }
  const timer = new AbortController();
  await Promise.race([
    once(sink, 'drain', { signal: timer.signal }).catch(() => undefined),
    setTimeout(1000, undefined, { signal: timer.signal }).catch(() => undefined),
  ]);
  timer.abort();
}

/**
 * A table: sheets of rows, one cell per column, with a bold frozen header, filters over every row, widths and money formats. A
 * sheet holds at most `maxRows` rows, its header included; the table continues on `<name> (2)`, `(3)` ...
 * Returns the names of its sheets.
 */
async function table<T>(
  workbook: DeterministicWorkbookWriter,
  name: string,
  columns: readonly Column<T>[],
  items: AsyncIterable<T>,
  maxRows: number,
): Promise<string[]> {
  const names = [name];
  const open = (sheetName: string) => {
    const sheet = workbook.addWorksheet(sheetName, { views: [{ state: 'frozen', ySplit: 1 }] });
    sheet.columns = columns.map((c, i) => ({
      key: String(i),
      width: c.width,
      style: c.money ? { numFmt: MONEY } : c.numFmt ? { numFmt: c.numFmt } : {},
    }));
    const header = sheet.addRow(columns.map((c) => c.header));
    header.font = { bold: true };
    header.commit();
    return sheet;
  };
  const close = (sheet: ExcelJS.Worksheet, rows: number) => {
    sheet.autoFilter = { from: { row: 1, column: 1 }, to: { row: rows, column: columns.length } };
    sheet.commit();
  };
  let sheet = open(name);
  let rows = 1;
  for await (const item of items) {
    if (rows >= maxRows) {
      close(sheet, rows);
      names.push(`${name} (${names.length + 1})`);
      sheet = open(names[names.length - 1] as string);
      rows = 1;
    }
    addTextRow(
      sheet,
      columns.map((column) => column.cell(item)),
    ).commit();
    rows += 1;
    if (rows % 2000 === 0) await drained(sheet);
  }
  close(sheet, rows);
  return names;
}
