import ExcelJS from 'exceljs';

export type Cell = string | number | null;

/** A workbook read back with exceljs: each sheet as rows of plain cell values (1-based rows kept). */
export async function readWorkbook(file: string | Buffer): Promise<{
  names: string[];
  sheet(name: string): Cell[][];
  workbook: ExcelJS.Workbook;
}> {
  const workbook = new ExcelJS.Workbook();
  if (typeof file === 'string') await workbook.xlsx.readFile(file);
  else await workbook.xlsx.load(file as unknown as ArrayBuffer);
  return {
    names: workbook.worksheets.map((ws) => ws.name),
    sheet(name) {
      const ws = workbook.getWorksheet(name);
      if (!ws) throw new Error(`no sheet ${name}`);
      const rows: Cell[][] = [];
      ws.eachRow({ includeEmpty: true }, (row, n) => {
        rows[n - 1] = (row.values as unknown[]).slice(1).map((v) => (v === undefined ? null : (v as Cell)));
      });
      for (let i = 0; i < rows.length; i += 1) rows[i] ??= [];
      return rows;
    },
    workbook,
  };
}

/** The Summary sheet's label -> values, and its tables (a bold title row, then rows until a blank one). */
export function summaryOf(rows: Cell[][]) {
  const value = (label: string): Cell[] => {
    const row = rows.find((r) => r[0] === label);
    if (!row) throw new Error(`no Summary row "${label}"`);
    return row.slice(1);
  };
  const table = (title: string): Map<string, Cell[]> => {
    const start = rows.findIndex((r) => r[0] === title);
    if (start < 0) throw new Error(`no Summary table "${title}"`);
    const lines = new Map<string, Cell[]>();
    for (let i = start + 1; i < rows.length && rows[i]!.length > 0 && rows[i]![0] !== null; i += 1)
      lines.set(String(rows[i]![0]), rows[i]!.slice(1));
    return lines;
  };
  return { value, table };
}

/** Ringgit as shown in a money cell, back to sen (the cell holds sen / 100). */
export const sen = (cell: Cell | undefined): number => Math.round(Number(cell) * 100);
