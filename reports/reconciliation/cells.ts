import type ExcelJS from 'exceljs';

/** Excel's last row number: a sheet with more rows (its header included) does not open. */
export const EXCEL_MAX_ROWS = 1_048_576;

/**
 * Text a spreadsheet may take for a formula when it is typed, pasted or re-saved as CSV (the OWASP
 * CSV-injection rule): a leading `=`, `+`, `-`, `@`, tab or CR.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** Whether a text starts like a formula (the rule above; the dashboard's CSV export quotes such cells). */
export const startsLikeFormula = (text: string): boolean => FORMULA_START.test(text);

// C0 controls, DEL and C1 controls. exceljs drops most of them without a word (XML cannot carry them).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * The text as a cell shows it: each C0 control as its Unicode control picture (U+2400 + code, so NUL is
 * ␀ and tab is ␉), DEL as ␡ (U+2421), a C1 control as U+FFFD. Visible, never silently dropped.
 */
export function visibleText(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    return code === 0x7f ? '\u2421' : '\ufffd';
  });
}

/**
 * Adds a row whose text cells are safe in a spreadsheet: control characters made visible, and text that
 * starts like a formula marked `quotePrefix` (Excel's "text, not a formula" flag, which the
 * DeterministicWorkbookWriter writes into the cell's format). The value itself is kept as it was sent.
 */
export function addTextRow(sheet: ExcelJS.Worksheet, values: readonly unknown[]): ExcelJS.Row {
  const shown = values.map((v) => (typeof v === 'string' ? visibleText(v) : v));
  const row = sheet.addRow(shown);
  shown.forEach((value, i) => {
    const sent = values[i];
    if (typeof value !== 'string' || typeof sent !== 'string') return;
    if (!FORMULA_START.test(sent) && !FORMULA_START.test(value)) return;
    const cell = row.getCell(i + 1);
    cell.style = { ...cell.style, quotePrefix: true } as Partial<ExcelJS.Style>;
  });
  return row;
}
