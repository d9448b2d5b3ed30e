import type { AddChargeRule } from '../store/index.ts';

/**
 * The add charge of a payment method, in sen: a fixed amount, or a percentage of the order amount rounded
 * half up to the sen. Percentages are taken to hundredths of a percent (basis points) so the arithmetic
 * stays in integers: 1.5% of RM 10.01 is 1001 x 150 / 10000 = 15.015 sen -> 15 sen.
 */
export function addChargeSen(rule: AddChargeRule | undefined, amountSen: number): number {
  if (!rule) return 0;
  if ('fixedSen' in rule) return rule.fixedSen;
  const basisPoints = Math.round(rule.percent * 100);
  return Math.floor((amountSen * basisPoints + 5000) / 10_000);
}
