import type { Writable } from 'node:stream';
import ExcelJS from 'exceljs';

type ZipAppend = (source: unknown, data: Record<string, unknown>) => unknown;
type AddStyle = (model: unknown, cellType: unknown) => number;

/** The parts of exceljs's styles manager used here: its cell formats as XML, and their index by XML. */
interface StylesInternals {
  addStyleModel: AddStyle;
  model: { styles: string[] };
  index: { style: Record<string, number> };
}

/** The parts of exceljs's sheet stream (StreamBuf) read by backlog(): its own buffers, and what it writes into. */
interface SheetStreamInternals {
  buffers: { length: number }[];
  pipes: { _writableState?: { length: number } }[];
}

/**
 * The id of a cell format like `base` with quotePrefix="1" (the cell is text even when it starts like a
 * formula). exceljs 4 has no quotePrefix in its style model, so the format's XML is derived from the one
 * it built, and registered the way exceljs registers its own (deduplicated by XML).
 */
function quotedStyle(styles: StylesInternals, base: number): number {
  const xml = styles.model.styles[base];
  if (xml === undefined || !xml.startsWith('<xf ')) throw new Error('unexpected exceljs cell format XML');
  const quoted = xml.replace('<xf ', '<xf quotePrefix="1" ');
  let id = styles.index.style[quoted];
  if (id === undefined) {
    id = styles.model.styles.length;
    styles.index.style[quoted] = id;
    styles.model.styles.push(quoted);
  }
  return id;
}

/**
 * exceljs's streaming workbook writer, made byte-deterministic: the same cells give the same file.
 *
 * exceljs stamps every zip entry with the current time (archiver's default entry date) and the document
 * properties with `new Date()`. This writer pins both to a date the caller chooses (the day's cut-off), so
 * a re-run or a replay of a day writes the very same bytes. The theme and package parts are appended from
 * exceljs's constructor through `addThemes`, which is why the pin is installed there: it is the first
 * method the constructor calls after creating the zip.
 *
 * It reaches into exceljs's internals (the zip, the styles manager, the sheet slots), so package.json pins
 * exceljs to one exact version; an upgrade must pass test/reports/deterministic-writer.test.ts and give the
 * fixture day's workbooks the same bytes.
 */
export class DeterministicWorkbookWriter extends ExcelJS.stream.xlsx.WorkbookWriter {
  /** Writes to a file, or to a stream (the dashboard's export, streamed as the response). */
  constructor(options: { date: Date } & ({ filename: string } | { stream: Writable })) {
    DeterministicWorkbookWriter.nextDate = options.date;
    const target = 'stream' in options ? { stream: options.stream } : { filename: options.filename };
    super({ ...target, useStyles: true, useSharedStrings: false });
    this.creator = 'amil';
    this.lastModifiedBy = 'amil';
    this.created = options.date;
    this.modified = options.date;
    this.cacheStyles();
  }

  /**
   * exceljs gives every cell a fresh style object, so its own cache (by object) never hits and it builds
   * the style XML again for each cell. Equal styles get equal ids in exceljs anyway (it dedups by XML), so
   * caching by content changes nothing in the file and saves a third of the writing time.
   */
  private cacheStyles(): void {
    const styles = (this as unknown as { styles: StylesInternals }).styles;
    const add = styles.addStyleModel.bind(styles);
    const ids = new Map<string, number>();
    styles.addStyleModel = (model, cellType) => {
      if (!model) return add(model, cellType);
      const key = `${String(cellType)}|${JSON.stringify(model)}`;
      let id = ids.get(key);
      if (id === undefined) {
        const { quotePrefix, ...rest } = model as { quotePrefix?: boolean };
        id = quotePrefix ? quotedStyle(styles, add(rest, cellType)) : add(model, cellType);
        ids.set(key, id);
      }
      return id;
    };
  }

  /**
   * Keeps the first sheet's place (id 1, the first tab) for a sheet written last: the Summary, whose figures
   * are known only once the other sheets are written. A streamed sheet's zip entry opens when the sheet is
   * added and holds back every later entry until it is committed, so the Summary cannot simply be added
   * first and filled last; it is added last into the place kept for it (exceljs gives a new sheet the first
   * free id).
   */
  reserveFirstSheet(): void {
    this.sheetSlots()[1] = { committed: true };
  }

  /** Adds a sheet into the place reserveFirstSheet kept. */
  addReservedSheet(name: string, options: Partial<ExcelJS.AddWorksheetOptions>): ExcelJS.Worksheet {
    this.sheetSlots()[1] = undefined;
    const sheet = this.addWorksheet(name, options);
    if (sheet.id !== 1) throw new Error('the first sheet place was not kept');
    return sheet;
  }

  /**
   * Bytes of sheet XML written and not yet taken by the zip. exceljs hands a sheet's XML to the zip without
   * backpressure (its sheet buffer writes on whatever the zip's input stream answers), so when nobody reads
   * the zip's output the rows pile up here, in memory: a writer paced by its reader waits on this.
   */
  backlog(): number {
    let bytes = 0;
    for (const slot of this.sheetSlots()) {
      const stream = (slot as { _stream?: SheetStreamInternals } | undefined)?._stream;
      if (!stream) continue;
      for (const buffer of stream.buffers) bytes += buffer.length;
      for (const pipe of stream.pipes) bytes += pipe._writableState?.length ?? 0;
    }
    return bytes;
  }

  private sheetSlots(): unknown[] {
    return (this as unknown as { _worksheets: unknown[] })._worksheets;
  }

  /** Handed from the constructor to addThemes, which runs inside super() before `this` is usable. */
  private static nextDate: Date | undefined;

  override addThemes(): Promise<void> {
    this.pinEntryDates();
    return super.addThemes();
  }

  private pinEntryDates(): void {
    const date = DeterministicWorkbookWriter.nextDate;
    if (!date) throw new Error('DeterministicWorkbookWriter needs a date');
    const zip = (this as unknown as { zip: { append: ZipAppend } }).zip;
    const append = zip.append.bind(zip);
    zip.append = (source, data) => append(source, { ...data, date });
  }
}
