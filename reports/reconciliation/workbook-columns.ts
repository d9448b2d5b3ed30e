/**
 * The workbook's tables, each one column list (header, width, format, accessor): Transactions, Exceptions,
 * Pending and Adjustments (docs/reconciliation.md). Money is ringgit from integer sen, times UTC+8.
 */
import type { ReconChannel, ReconItem, ReconMovement, ReconSnapshot } from '../../core/store/index.ts';
import { NONE_CODE, stateName, typeName } from './names.ts';
import { canonicalType, collectedDelta } from './summary.ts';

export const MONEY = '#,##0.00';
/** Times are Excel date-time cells (sortable, filterable, usable in formulas), shown in UTC+8. */
export const DATE_TIME = 'yyyy-mm-dd hh:mm:ss';
const KL_OFFSET_MS = 8 * 3_600_000;
export const CHANNEL_LABEL: Record<ReconChannel, string> = {
  bank: 'Bank posting',
  fpx: 'Checkout FPX',
  card: 'Checkout card',
  ewallet: 'Checkout e-wallet',
};
/** Money cells are numbers in ringgit, computed from integer sen only here, at the edge. */
export const rm = (sen: number | null): number | null => (sen === null ? null : sen / 100);
/**
 * An instant as a date cell showing its Kuala Lumpur wall-clock time: an Excel date has no time zone, so
 * the cell holds the UTC+8 reading (exceljs writes a Date's UTC fields).
 */
export const kl = (utcIso: string): Date => new Date(Date.parse(utcIso) + KL_OFFSET_MS);
const codes = (json: string): string[] => JSON.parse(json) as string[];

/** One column of a table: its header, width and format, and the accessor giving its cell of a row. */
export interface Column<T> {
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

/** The Transactions sheet: every transaction of the day, every field of the record. */
export const TRANSACTION_COLUMNS: readonly Column<ReconItem>[] = [
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

export const EXCEPTION_COLUMNS: readonly Column<ExceptionLine>[] = [
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

/** The Exceptions sheet's rows: the flagged transactions, then the anomalies received. */
export async function* exceptionLines(
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
export const pendingColumns = (asOf: number): readonly Column<ReconItem>[] => [
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

/** The Adjustments sheet: changes received during the day to earlier days. */
export const ADJUSTMENT_COLUMNS: readonly Column<ReconMovement>[] = [
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
