/** The payments page's exports: the filtered rows as CSV or as an Excel workbook, streamed as they are read. */
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { setImmediate as turn, setTimeout as sleep } from 'node:timers/promises';
import type { PaymentRow } from '../../../core/store/index.ts';
import { formatSen } from '../../../core/money.ts';
import { formatKl } from '../../../core/time.ts';
import { primedRows, primedStream } from '../../../core/http/primed-stream.ts';
import { addTextRow, EXCEL_MAX_ROWS, startsLikeFormula, visibleText } from '../../reconciliation/cells.ts';

interface Column {
  header: string;
  width: number;
  money?: boolean;
  cell: (p: PaymentRow) => string | number | null;
}

/** The columns of both exports: the payment report's fields, times in UTC+8. */
const COLUMNS: readonly Column[] = [
  { header: 'fpx_seller_order_no', width: 24, cell: (p) => p.orderNo },
  { header: 'created_date (UTC+8)', width: 20, cell: (p) => formatKl(new Date(p.createdAt)) },
  { header: 'is_approved', width: 11, cell: (p) => (p.status === 'success' ? 1 : 0) },
  { header: 'fpx_debit_auth_code', width: 12, cell: (p) => p.debitAuthCode ?? '' },
  { header: 'refNo', width: 20, cell: (p) => p.refNo },
  { header: 'extraData', width: 20, cell: (p) => p.extraData },
  { header: 'amount', width: 12, money: true, cell: (p) => p.amountSen },
  { header: 'addCharge', width: 12, money: true, cell: (p) => p.addChargeSen },
  { header: 'status', width: 10, cell: (p) => p.status },
  { header: 'payment_method', width: 10, cell: (p) => p.paymentMethod },
  { header: 'email', width: 28, cell: (p) => p.email },
  { header: 'fpx_txn_id', width: 20, cell: (p) => p.fpxTxnId },
  { header: 'fpx_txn_time', width: 20, cell: (p) => p.fpxTxnTime },
  { header: 'source', width: 10, cell: (p) => p.source },
  { header: 'pay_link', width: 30, cell: (p) => p.payLink },
];

export const CSV_TYPE = 'text/csv; charset=utf-8';
export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/**
 * One CSV cell. Text that a spreadsheet would take for a formula gets a leading apostrophe (the OWASP rule
 * the workbook follows with quotePrefix), control characters are shown as the workbook shows them, and every
 * text cell is quoted, so commas, quotes and line breaks in a value never shift a column.
 */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const text = visibleText(value);
  const safe = startsLikeFormula(value) || startsLikeFormula(text) ? `'${text}` : text;
  return `"${safe.replace(/"/g, '""')}"`;
}

const csvValue = (column: Column, p: PaymentRow) => {
  const value = column.cell(p);
  return column.money && typeof value === 'number' ? formatSen(value) : value;
};

/**
 * The CSV (UTF-8 with a byte-order mark, so Excel reads names right; CRLF lines as RFC 4180 has them), its
 * header and first piece of rows read before it is answered (`primedStream`).
 */
export function paymentsCsv(rows: AsyncIterable<PaymentRow>): Promise<Readable> {
  async function* lines(): AsyncGenerator<string> {
    yield `\ufeff${COLUMNS.map((c) => csvCell(c.header)).join(',')}\r\n`;
    let piece: string[] = [];
    for await (const p of rows) {
      piece.push(`${COLUMNS.map((c) => csvCell(csvValue(c, p))).join(',')}\r\n`);
      if (piece.length === 500) {
        yield piece.join('');
        piece = [];
        // The store reads synchronously: a turn of the event loop lets other requests in between pieces.
        await turn();
      }
    }
    if (piece.length > 0) yield piece.join('');
  }
  return primedStream(lines(), 2);
}

const MONEY = '#,##0.00';
/** How much of the workbook may wait for the client before the export stops reading rows. */
const BACKLOG_BYTES = 4 * 1024 * 1024;
const BACKLOG_POLL_MS = 20;

/**
 * Waits while the client has more than 4 MB of the workbook still to read; false once the response is gone
 * (the client left), so the export stops reading the store. exceljs takes rows whatever its reader does and
 * keeps them in memory until the zip takes them (the response's own buffer stays full meanwhile), so the
 * wait is on the writer's backlog, polled: it emits nothing when it shrinks.
 */
async function paced(workbook: { backlog(): number }, out: Writable): Promise<boolean> {
  while (!out.destroyed && workbook.backlog() > BACKLOG_BYTES) await sleep(BACKLOG_POLL_MS);
  if (out.destroyed) return false;
  // The store reads synchronously: a turn of the event loop lets other requests in between pieces.
  await turn();
  return true;
}

/**
 * The workbook, written by exceljs's streaming writer into the returned stream as rows are read: one sheet
 * of payments (continued on "Payments (2)" past Excel's row limit), bold frozen header, filters, money as
 * numbers in ringgit. Answered once the first row is read (`primedRows`), so a store failing at once is an
 * error page; errors later while writing destroy the stream (the client sees a broken download).
 */
export async function paymentsXlsx(source: AsyncIterable<PaymentRow>, now: Date): Promise<Readable> {
  const rows = await primedRows(source);
  // exceljs loads with the first export, not with every web process (decision 257).
  const { DeterministicWorkbookWriter } = await import('../../reconciliation/deterministic-writer.ts');
  const out = new PassThrough();
  const workbook = new DeterministicWorkbookWriter({ stream: out, date: now });
  const open = (name: string) => {
    const sheet = workbook.addWorksheet(name, { views: [{ state: 'frozen', ySplit: 1 }] });
    sheet.columns = COLUMNS.map((c, i) => ({
      key: String(i),
      width: c.width,
      style: c.money ? { numFmt: MONEY } : {},
    }));
    const header = sheet.addRow(COLUMNS.map((c) => c.header));
    header.font = { bold: true };
    header.commit();
    return sheet;
  };
  void (async () => {
    let sheets = 1;
    let sheet = open('Payments');
    let count = 1;
    const close = () => {
      sheet.autoFilter = { from: { row: 1, column: 1 }, to: { row: count, column: COLUMNS.length } };
      sheet.commit();
    };
    for await (const p of rows) {
      if (count >= EXCEL_MAX_ROWS) {
        close();
        sheets += 1;
        sheet = open(`Payments (${sheets})`);
        count = 1;
      }
      addTextRow(
        sheet,
        COLUMNS.map((c) => {
          const value = c.cell(p);
          return c.money && typeof value === 'number' ? value / 100 : value;
        }),
      ).commit();
      count += 1;
      if (count % 1000 === 0 && !(await paced(workbook, out))) return;
    }
    close();
    await workbook.commit();
  })().catch((error: unknown) => out.destroy(error as Error));
  return out;
}
