import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { setTimeout } from 'node:timers/promises';
import type ExcelJS from 'exceljs';
import { klDayStartUtc } from '../../core/time.ts';
import { TEST_SINK } from '../../core/store/index.ts';
import type { ReconChannel, ReconItem, ReconMovement, ReconSnapshot } from '../../core/store/index.ts';
import { addTextRow, EXCEL_MAX_ROWS } from './cells.ts';
import { DeterministicWorkbookWriter } from './deterministic-writer.ts';
import { NONE_CODE, stateName, typeName } from './names.ts';
import {
  canonicalType,
  collectedDelta,
  summaryBuilder,
  STATUSES,
  type BreakdownLine,
  type DaySummary,
  type Total,
} from './summary.ts';

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

const MONEY = '#,##0.00';
/** Times are Excel date-time cells (sortable, filterable, usable in formulas), shown in UTC+8. */
const DATE_TIME = 'yyyy-mm-dd hh:mm:ss';
const KL_OFFSET_MS = 8 * 3_600_000;
const CHANNEL_LABEL: Record<ReconChannel, string> = {
  bank: 'Bank posting',
  fpx: 'Checkout FPX',
  card: 'Checkout card',
  ewallet: 'Checkout e-wallet',
};
/** Money cells are numbers in ringgit, computed from integer sen only here, at the edge. */
const rm = (sen: number | null): number | null => (sen === null ? null : sen / 100);
/**
 * An instant as a date cell showing its Kuala Lumpur wall-clock time: an Excel date has no time zone, so
 * the cell holds the UTC+8 reading (exceljs writes a Date's UTC fields).
 */
const kl = (utcIso: string): Date => new Date(Date.parse(utcIso) + KL_OFFSET_MS);
const codes = (json: string): string[] => JSON.parse(json) as string[];

/** One column of a table: its header, width and format, and the accessor giving its cell of a row. */
interface Column<T> {
  header: string;
  width: number;
  money?: boolean;
  numFmt?: string;
  cell: (row: T) => unknown;
}
const timeColumn = <T>(header: string, cell: (row: T) => Date): Column<T> => ({
  header,
  width: 20,
  numFmt: DATE_TIME,
  cell,
});

/**
 * Writes one sink's reconciliation workbook for one day with exceljs's streaming writer, so a day of a
 * million rows never sits in memory, and returns its summary. The day's transactions are read once: the
 * summary is counted as their rows are written, and the Summary sheet (the first tab) is written last.
 * Same snapshot, same bytes (see DeterministicWorkbookWriter).
 */
export async function writeReconWorkbook(input: WorkbookInput): Promise<DaySummary> {
  const { snapshot } = input;
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

const TRANSACTION_COLUMNS: readonly Column<ReconItem>[] = [
  { header: 'Order no', width: 22, cell: (item) => item.orderNo },
  timeColumn('Time (UTC+8)', (item) => kl(item.timeUtc)),
  { header: 'Channel', width: 18, cell: (item) => CHANNEL_LABEL[item.channel] },
  { header: 'Payer name', width: 28, cell: (item) => item.name },
  { header: 'Email', width: 30, cell: (item) => item.email },
  { header: 'Data email', width: 30, cell: (item) => item.dataEmail },
  { header: 'Zakat name', width: 28, cell: (item) => item.zakatName },
  { header: 'IC no', width: 15, cell: (item) => item.icNo },
  { header: 'Phone', width: 14, cell: (item) => item.phone },
  { header: 'Address', width: 36, cell: (item) => item.address },
  { header: 'Postcode', width: 9, cell: (item) => item.postcode },
  { header: 'City', width: 18, cell: (item) => item.city },
  { header: 'Type (raw)', width: 20, cell: (item) => item.typeRaw },
  { header: 'Type code', width: 18, cell: (item) => canonicalType(item) },
  { header: 'Type', width: 18, cell: (item) => typeName(canonicalType(item)) },
  { header: 'State code', width: 16, cell: (item) => item.state ?? NONE_CODE },
  { header: 'State', width: 18, cell: (item) => stateName(item.state) },
  { header: 'Year', width: 8, cell: (item) => item.year },
  { header: 'Amount (RM)', width: 14, money: true, cell: (item) => rm(item.amountSen) },
  { header: 'Zakat amount (RM)', width: 14, money: true, cell: (item) => rm(item.zakatAmountSen) },
  { header: 'Add charge (RM)', width: 14, money: true, cell: (item) => rm(item.addChargeSen) },
  { header: 'Rate (RM)', width: 11, money: true, cell: (item) => rm(item.rateSen) },
  { header: 'Dependants', width: 11, cell: (item) => item.dependants },
  { header: 'Status', width: 10, cell: (item) => item.status },
  { header: 'Version', width: 9, cell: (item) => item.version },
  { header: 'Exception codes', width: 34, cell: (item) => codes(item.exceptions).join(' ') },
];

/** A row of the Exceptions sheet: a flagged transaction, or an anomaly (a contradicting version received). */
interface ExceptionLine {
  orderNo: string;
  kind: 'flagged' | 'anomaly';
  channel: ReconChannel;
  time: string;
  amountSen: number | null;
  reasons: string;
  explanation: string;
  stored: string | null;
  incoming: string | null;
}

const EXCEPTION_COLUMNS: readonly Column<ExceptionLine>[] = [
  { header: 'Order no', width: 22, cell: (line) => line.orderNo },
  { header: 'Kind', width: 12, cell: (line) => line.kind },
  { header: 'Channel', width: 18, cell: (line) => CHANNEL_LABEL[line.channel] },
  timeColumn('Time (UTC+8)', (line) => kl(line.time)),
  { header: 'Amount (RM)', width: 14, money: true, cell: (line) => rm(line.amountSen) },
  { header: 'Reason codes', width: 34, cell: (line) => line.reasons },
  { header: 'Explanation', width: 70, cell: (line) => line.explanation },
  { header: 'Stored version', width: 50, cell: (line) => line.stored },
  { header: 'Incoming version', width: 50, cell: (line) => line.incoming },
];

async function* exceptionLines(
  flagged: AsyncIterable<ReconItem>,
  snapshot: ReconSnapshot,
  explanations: Readonly<Record<string, string>>,
): AsyncGenerator<ExceptionLine> {
  for await (const item of flagged) {
    const list = codes(item.exceptions);
    yield {
      orderNo: item.orderNo,
      kind: 'flagged',
      channel: item.channel,
      time: item.timeUtc,
      amountSen: item.amountSen,
      reasons: list.join(' '),
      explanation: list.map((code) => explanations[code] ?? code).join(' '),
      stored: null,
      incoming: null,
    };
  }
  for (const anomaly of await snapshot.anomalies()) {
    yield {
      orderNo: anomaly.orderNo,
      kind: 'anomaly',
      channel: anomaly.channel,
      time: anomaly.seenAt,
      amountSen: null,
      reasons: 'ANOMALY',
      explanation: `Received a version that contradicts the stored one (${anomaly.reason}); the stored version was kept.`,
      stored: anomaly.stored,
      incoming: anomaly.incoming,
    };
  }
}

/** The Pending sheet's columns; an item's age is counted to the as-of instant (epoch ms). */
const pendingColumns = (asOf: number): readonly Column<ReconItem>[] => [
  { header: 'Order no', width: 22, cell: (item) => item.orderNo },
  timeColumn('Time (UTC+8)', (item) => kl(item.timeUtc)),
  { header: 'Business day', width: 12, cell: (item) => item.businessDate },
  { header: 'Channel', width: 18, cell: (item) => CHANNEL_LABEL[item.channel] },
  { header: 'Payer name', width: 28, cell: (item) => item.name },
  { header: 'Email', width: 30, cell: (item) => item.email },
  { header: 'Amount (RM)', width: 14, money: true, cell: (item) => rm(item.amountSen) },
  {
    header: 'Age at as-of (days)',
    width: 18,
    numFmt: '0.00',
    cell: (item) => Math.floor((asOf - new Date(item.timeUtc).getTime()) / 3_600_000) / 24,
  },
];

const ADJUSTMENT_COLUMNS: readonly Column<ReconMovement>[] = [
  { header: 'Order no', width: 22, cell: (move) => move.orderNo },
  { header: 'Business day', width: 12, cell: (move) => move.businessDate },
  timeColumn('Received (UTC+8)', (move) => kl(move.receivedAt)),
  { header: 'Channel', width: 18, cell: (move) => CHANNEL_LABEL[move.channel] },
  { header: 'Previous status', width: 15, cell: (move) => move.beforeStatus ?? '(not received before)' },
  { header: 'New status', width: 12, cell: (move) => move.status },
  { header: 'Previous amount (RM)', width: 19, money: true, cell: (move) => rm(move.beforeAmountSen) },
  { header: 'New amount (RM)', width: 16, money: true, cell: (move) => rm(move.amountSen) },
  { header: 'Change to collected (RM)', width: 22, money: true, cell: (move) => rm(collectedDelta(move)) },
];

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

function writeSummary(
  workbook: DeterministicWorkbookWriter,
  summary: DaySummary,
  title: string,
  transactionSheets: readonly string[],
): void {
  const sheet = workbook.addReservedSheet('Summary', { views: [{ state: 'frozen', ySplit: 1 }] });
  sheet.columns = [{ width: 44 }, ...Array.from({ length: 9 }, () => ({ width: 16 }))];
  const line = (values: unknown[], options: { bold?: boolean; money?: number[] } = {}) => {
    const row = addTextRow(sheet, values);
    if (options.bold) row.font = { bold: true };
    for (const col of options.money ?? []) row.getCell(col).numFmt = MONEY;
    values.forEach((value, i) => {
      if (value instanceof Date) row.getCell(i + 1).numFmt = DATE_TIME;
    });
    row.commit();
  };
  const totalCells = (t: Total) => [t.count, rm(t.sumSen)];
  const isTest = summary.sink === TEST_SINK;

  line([isTest ? 'Bank live-test report' : 'Reconciliation workbook', title], { bold: true });
  line(['Agency', isTest ? 'BANK (live tests, not zakat)' : summary.sink]);
  line(['Business day (Asia/Kuala_Lumpur)', summary.day]);
  line(['Run id', summary.runId]);
  // The as-of time is what the figures mean (never the wall clock: same inputs, same bytes).
  line(['Figures include data received before (UTC+8)', kl(summary.asOf)]);
  line(['Changes counted from (UTC+8)', kl(klDayStartUtc(summary.day))]);
  line(['Content fingerprint (SHA-256)', summary.fingerprint]);
  // Only a day past Excel's row limit has this line, so other days' bytes do not change.
  if (transactionSheets.length > 1) line(['Transactions are on the sheets', transactionSheets.join(', ')]);
  line([]);
  if (summary.inputs.transactions === 0) {
    line(['No postings or payments on this day.'], { bold: true });
    line([]);
  }
  line(['Input counts', 'Count'], { bold: true });
  line(['Transactions of the day', summary.inputs.transactions]);
  line(['Flagged transactions', summary.inputs.flagged]);
  line(['Anomalies received', summary.inputs.anomalies]);
  line(['Changes received during the day', summary.inputs.movements]);
  line(['Changes to earlier days (adjustments)', summary.inputs.adjustments]);
  line(['Pending at as-of', summary.inputs.pendingClosing]);
  line([]);

  line(['By status', 'Count', 'Amount (RM)', 'Add charges (RM)'], { bold: true });
  for (const status of STATUSES)
    line([status, ...totalCells(summary.byStatus[status]), rm(summary.addChargesSen[status])], {
      money: [3, 4],
    });
  const all = STATUSES.reduce(
    (t, s) => ({
      count: t.count + summary.byStatus[s].count,
      sumSen: t.sumSen + summary.byStatus[s].sumSen,
    }),
    { count: 0, sumSen: 0 },
  );
  const allCharges = STATUSES.reduce((sum, s) => sum + summary.addChargesSen[s], 0);
  line(['total', ...totalCells(all), rm(allCharges)], { bold: true, money: [3, 4] });
  line([]);

  // The name first (what an accountant reads), the code last (what the Transactions sheet filters on).
  const breakdown = (title: string, lines: BreakdownLine[], name: (key: string) => string) => {
    line(
      [
        title,
        'Count',
        'Amount (RM)',
        'Success',
        'Success (RM)',
        'Pending',
        'Pending (RM)',
        'Failed',
        'Failed (RM)',
        'Code',
      ],
      { bold: true },
    );
    for (const l of lines)
      line(
        [
          name(l.key),
          ...totalCells(l.all),
          ...totalCells(l.success),
          ...totalCells(l.pending),
          ...totalCells(l.failed),
          l.key,
        ],
        {
          money: [3, 5, 7, 9],
        },
      );
    line([]);
  };
  breakdown('By zakat type', summary.byType, typeName);
  breakdown('By state', summary.byState, stateName);
  breakdown('By channel', summary.byChannel, (key) => CHANNEL_LABEL[key as ReconChannel]);

  const roll = summary.pending;
  line(['Pending roll', 'Count', 'Amount (RM)'], { bold: true });
  line(['Opening (pending at the start of the day)', ...totalCells(roll.opening)], { money: [3] });
  line(['+ became pending', ...totalCells(roll.added)], { money: [3] });
  line(['- pending that succeeded', ...totalCells(roll.succeeded)], { money: [3] });
  line(['- pending that failed', ...totalCells(roll.failed)], { money: [3] });
  line(['+/- amount changes of pending items', ...totalCells(roll.amountChanges)], { money: [3] });
  line(['Closing (pending at as-of)', ...totalCells(roll.closing)], { bold: true, money: [3] });
  line(['Check: opening + movements = closing', roll.balances ? 'balances' : 'DOES NOT BALANCE'], {
    bold: true,
  });
  line([
    'Each version received is one movement: a posting that went pending and then succeeded during the day is counted in "+ became pending" and in "- pending that succeeded".',
  ]);
  line([]);
  line(['Adjustments to earlier days', 'Count', 'Change to collected (RM)'], { bold: true });
  line(
    [
      'Status changes and late arrivals',
      summary.adjustments.count,
      rm(summary.adjustments.collectedDeltaSen),
    ],
    {
      money: [3],
    },
  );
  sheet.commit();
}
