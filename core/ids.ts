import { randomUUID } from 'node:crypto';

/** Opaque random ids with a type prefix, so a logged id says what it names (`bat_…`, `anm_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replace(/-/g, '')}`;
}
