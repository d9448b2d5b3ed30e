/** A whole-number setting of a benchmark from the environment: `fallback` when unset, refused outside min..max. */
export function envInt(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${name} must be ${min} to ${max} (got "${raw}")`);
  return n;
}
