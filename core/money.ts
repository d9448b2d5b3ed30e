/** Money is integer sen inside the system; these are the only conversions at the edges. */

/** Ringgit as a JSON number (already checked to have at most two decimals) to sen. */
export function ringgitNumberToSen(ringgit: number): number {
  const sen = ringgitStringToSen(String(ringgit));
  if (sen === undefined) throw new RangeError(`not a ringgit amount with at most two decimals: ${ringgit}`);
  return sen;
}

/**
 * Ringgit as a decimal string ("10", "10.5", "10.50") to sen, without passing through a float.
 * Returns undefined for anything that is not a plain non-negative decimal with at most two decimals.
 */
export function ringgitStringToSen(ringgit: string): number | undefined {
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(ringgit);
  if (!match) return undefined;
  const [, whole = '0', fraction = ''] = match;
  const sen = Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
  return Number.isSafeInteger(sen) ? sen : undefined;
}

/** Sen to the wire form "10.00". */
export function formatSen(sen: number): string {
  const sign = sen < 0 ? '-' : '';
  const abs = Math.abs(sen);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Sen as Malaysians write ringgit, with thousands separators: `RM 1,234.50` (`RM -1,234.50` below zero). */
export function formatRinggit(sen: number): string {
  return `RM ${formatSen(sen).replace(/\B(?=(\d{3})+(?!\d))(?=\d*\.)/g, ',')}`;
}
