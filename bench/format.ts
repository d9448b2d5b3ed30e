/** Statistics and table formatting shared by the benchmark scripts (their reports, not their figures). */

/** The p-th percentile (nearest rank) of ascending samples; NaN when there are none. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export const fmtInt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
export const fmtMs = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 2 : 1) : '-');
export const fmtSec = (ms: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(2) : '-');
export const fmtMb = (bytes: number) => (Number.isFinite(bytes) ? (bytes / 1024 / 1024).toFixed(1) : '-');
export const fmtPct = (n: number, digits = 0) => (Number.isFinite(n) ? `${n.toFixed(digits)}%` : '-');
/** Two decimals; two significant digits below 0.1, so that a small ratio does not print as 0.00. */
export const fmtRatio = (n: number) =>
  Number.isFinite(n) ? (Math.abs(n) >= 0.1 || n === 0 ? n.toFixed(2) : n.toPrecision(2)) : '-';

/** A plain-text table: the first column left-aligned, the others right-aligned. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
